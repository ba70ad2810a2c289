// What errors.ts needs to know about the schema to name the most specific cause: the errors of the
// `then`/`else` branch an `if` error stands for (typebox reports only "if failed"), and which
// properties a schema object declares (to keep unevaluatedProperties quiet about them).
import Schema from "typebox/schema";
import { isPlainObject } from "../shared/config-shape.ts";
import { pointerSegments } from "../shared/findings.ts";
import { compileUserRegex } from "../shared/user-regex.ts";
import { enumErrors } from "./enum-sets.ts";
import type { ErrorContext, TbError } from "./errors.ts";
import { ROOT_BASE } from "./refs.ts";
import { withUserPatterns } from "./user-patterns.ts";
import { walkSchemas } from "./walk.ts";

type Compiled = ReturnType<typeof Schema.Compile>;

function at(root: unknown, pointer: string): unknown {
  let cur = root;
  for (const seg of pointerSegments(pointer)) {
    if (!isPlainObject(cur) && !Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

/**
 * An `unevaluatedProperties` error typebox's interpreter raises on an array (engine.ts): the
 * keyword applies to objects only, so it is no error of the document.
 */
export function unevaluatedOnArray(value: unknown, e: TbError): boolean {
  return e.keyword === "unevaluatedProperties" && Array.isArray(at(value, e.instancePath));
}

/** `schema`: the normalised root; `context`: what it was compiled with. */
export function errorContext(
  schema: unknown,
  context: Record<string, unknown>,
  value: unknown,
): ErrorContext {
  const root = isPlainObject(schema) ? schema : {};
  const id = typeof root.$id === "string" ? root.$id : ROOT_BASE;
  const withRoot = {
    ...context,
    [id.replace(/#$/, "")]: typeof root.$id === "string" ? root : { ...root, $id: id },
  };
  const branches = new Map<string, Compiled | null>();
  return {
    explainIf(e: TbError): TbError[] {
      const keyword = String(e.params.failingKeyword);
      const pointer = `${e.schemaPath.replace(/^#/, "")}/${keyword}`;
      const owner = at(root, e.schemaPath.replace(/^#/, ""));
      // A schemaPath reached through a $ref is relative to its target: no guess then.
      if (!isPlainObject(owner) || !("if" in owner) || !(keyword in owner)) return [];
      let branch = branches.get(pointer);
      if (branch === undefined) {
        try {
          const wrapper = { $ref: `${id.replace(/#$/, "")}#${encodeURI(pointer)}` };
          branch = withUserPatterns(() => Schema.Compile(withRoot as never, wrapper as never));
        } catch {
          branch = null;
        }
        branches.set(pointer, branch);
      }
      if (!branch) return [];
      const [, errors] = withUserPatterns(() => branch.Errors(at(value, e.instancePath))) as [
        boolean,
        TbError[],
      ];
      return enumErrors(errors).map((x) => ({
        ...x,
        schemaPath: `#${pointer}${x.schemaPath.replace(/^#/, "")}`,
        instancePath: `${e.instancePath}${x.instancePath}`,
      }));
    },
    present(instancePath: string, name: string): boolean {
      const o = at(value, instancePath);
      return isPlainObject(o) && Object.hasOwn(o, name);
    },
    declares(schemaPath: string, name: string): boolean {
      let found = false;
      walkSchemas(at(root, schemaPath.replace(/^#/, "")), (s, pointer) => {
        if (found || /\/(?:\$defs|definitions|not)(?:\/|$)/.test(pointer)) return;
        if (isPlainObject(s.properties) && Object.hasOwn(s.properties, name)) found = true;
        else if (isPlainObject(s.patternProperties))
          found = Object.keys(s.patternProperties).some((p) => {
            const r = compileUserRegex(p);
            return r.ok && r.regex.test(name);
          });
      });
      return found;
    },
  };
}
