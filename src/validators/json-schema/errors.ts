// typebox errors → findings. typebox reports every failed branch of anyOf/oneOf and aggregate
// errors (additionalProperties lists names); users want one finding per real problem, placed on
// the offending value or key. `rule` is the keyword's location along the evaluation path.
import { finding, pointerJoin } from "../shared/findings.ts";
import type { Position } from "../shared/position.ts";
import type { Finding } from "../types.ts";
import { lastKeyword } from "./walk.ts";

export interface TbError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

/** Maps a pointer to a position; `key` asks for the property name rather than its value. */
export type Locate = (pointer: string, key: boolean) => Position | null;

/** Keywords whose failing branches are speculative: only the keyword's own error is kept. */
const SPECULATIVE: Record<string, string[]> = {
  anyOf: ["anyOf/"],
  oneOf: ["oneOf/"],
  not: ["not"],
  contains: ["contains"],
  if: ["if", "then", "else"],
};
/** Aggregates that list names; expanded to one finding per name unless a child error explains it. */
const NAME_LISTS: Record<string, string> = {
  additionalProperties: "is not allowed (additionalProperties)",
  unevaluatedProperties: "is not allowed (unevaluatedProperties)",
  propertyNames: "is not a valid property name",
  unevaluatedItems: "is not allowed (unevaluatedItems)",
};

function rule(e: TbError): string {
  return e.keyword === "boolean" ? e.schemaPath : `${e.schemaPath}/${e.keyword}`;
}

function quote(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function messageFor(e: TbError): string {
  const p = e.params;
  switch (e.keyword) {
    case "enum":
      return `must be one of ${quote(p.allowedValues)}`;
    case "const":
      return `must be exactly ${quote(p.allowedValue)}`;
    case "if":
      return `does not match the "${String(p.failingKeyword)}" schema that applies because "if" matched or failed`;
    case "dependentRequired":
    case "dependencies":
      return `requires ${quote(p.dependencies)} when "${String(p.property)}" is present`;
    case "boolean":
      return "no value is allowed here (the schema is false)";
    default:
      return e.message;
  }
}

export function toFindings(errors: TbError[], locate: Locate): Finding[] {
  const drop = new Set<TbError>();
  for (const e of errors) {
    const prefixes = SPECULATIVE[e.keyword];
    if (!prefixes) continue;
    for (const other of errors) {
      if (other !== e && prefixes.some((p) => other.schemaPath.startsWith(`${e.schemaPath}/${p}`)))
        drop.add(other);
    }
  }
  const out: Finding[] = [];
  const push = (code: string, message: string, pointer: string, ruleAt: string, key = false) => {
    out.push(
      finding(`json_schema.${code}`, message, {
        path: pointer,
        rule: ruleAt,
        ...(locate(pointer, key) ?? {}),
      }),
    );
  };
  for (const e of errors) {
    if (drop.has(e)) continue;
    if (e.keyword === "required") {
      for (const name of (e.params.requiredProperties as string[]) ?? []) {
        push("required", `missing required property "${name}"`, e.instancePath, rule(e));
      }
      continue;
    }
    const listed = NAME_LISTS[e.keyword];
    if (listed) {
      const names = (e.params[e.keyword] as Array<string | number>) ?? [];
      const childPrefix = `${e.schemaPath}/${e.keyword}`;
      for (const name of names) {
        const at = pointerJoin(e.instancePath, name);
        // A failing subschema (other than `false`) already says what is wrong with this member.
        const explained = errors.some(
          (o) => o.keyword !== "boolean" && o.instancePath === at && o.schemaPath.startsWith(childPrefix),
        );
        if (!explained)
          push(
            e.keyword,
            `${typeof name === "number" ? "item" : "property"} ${quote(name)} ${listed}`,
            at,
            rule(e),
            true,
          );
      }
      continue;
    }
    if (e.keyword === "boolean") {
      const kw = lastKeyword(e.schemaPath);
      if (kw && NAME_LISTS[kw] && errors.some((o) => o.keyword === kw)) continue; // reported by the aggregate
      push(kw ?? "false_schema", messageFor(e), e.instancePath, rule(e), kw === "additionalProperties");
      continue;
    }
    push(e.keyword, messageFor(e), e.instancePath, rule(e));
  }
  return out;
}
