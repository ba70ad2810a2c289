// A workflow as a document (workflows as code): what `assay workflows export` writes and
// `import` and `assay validate --local` read. YAML or JSON (JSON is YAML).
import { Value } from "@sinclair/typebox/value";
import YAML from "yaml";
import type { ErrorItem } from "../errors.ts";
import { boundItems, schemaItems } from "../http/errors.ts";
import { jsonHasOverflow } from "../lib/text.ts";
import { WorkflowIn } from "./model.ts";
import { type WorkflowInput, draftOf } from "./service.ts";
import type { StepDef, Workflow } from "./types.ts";

export const DOC_KIND = "assay/workflow";
export const DOC_VERSION = 1;

/** The definition without database ids: what `import` and `--local` take back. */
export function toDocument(w: Workflow, steps: StepDef[]) {
  const { steps: drafted, ...settings } = draftOf(w, steps);
  return {
    kind: DOC_KIND,
    version: DOC_VERSION,
    ...settings,
    steps: drafted.map(({ id: _id, ...step }) => step),
  };
}

/**
 * Characters YAML 1.1 readers (PyYAML …) take for line breaks (NEL, U+2028, U+2029), and the byte
 * order mark, which YAML 1.2 allows only in a quoted scalar (§5.2): the yaml library wrote them
 * raw, in plain scalars. A string holding one is double-quoted, and each written as its escape.
 */
const NOT_PORTABLE = /[\u0085\u2028\u2029\ufeff]/;
const ESCAPE: Record<string, string> = {
  "\u0085": "\\N",
  "\u2028": "\\L",
  "\u2029": "\\P",
  "\ufeff": "\\uFEFF",
};

function portableYaml(doc: object): string {
  const d = new YAML.Document(doc);
  let quoted = false;
  YAML.visit(d, {
    Scalar(_, node) {
      if (typeof node.value === "string" && NOT_PORTABLE.test(node.value)) {
        node.type = "QUOTE_DOUBLE";
        quoted = true;
      }
    },
  });
  const text = d.toString({ lineWidth: 0 });
  // Every one of them is now inside a double-quoted scalar, where the escape means the character.
  return quoted ? text.replace(new RegExp(NOT_PORTABLE.source, "g"), (c) => ESCAPE[c]!) : text;
}

export const stringifyDocument = (doc: object, format: "yaml" | "json") =>
  format === "json" ? `${JSON.stringify(doc, null, 2)}\n` : portableYaml(doc);

const NOT_JSON_NUMBER =
  "may not hold .inf, .nan or a number beyond a 64-bit float's range (such as 1e400): JSON cannot carry one";

/** A document that parses but is no workflow definition: the API's errors[] items for it. */
export class DocumentError extends Error {
  constructor(readonly items: ErrorItem[]) {
    super(`not a workflow definition: ${items.map((i) => `${i.field} ${i.message}`).join("; ")}`);
  }
}

/**
 * Parses a document into the authoring API's input; throws Error with a readable message, and
 * DocumentError when it is not what POST …/workflows/ takes: the same schema, so a misspelt key
 * or a value of the wrong type is refused as the API refuses it, never dropped or coerced.
 */
export function parseDocument(text: string): WorkflowInput {
  let doc: unknown;
  try {
    // logLevel "error": errors are thrown, warnings not printed. At "warn" the library told the
    // process (the CLI's stderr) of what it coerces, a key that is a sequence; the definition's
    // checks below say what is wrong instead. ("silent" would not throw errors either.)
    doc = YAML.parse(text, { maxAliasCount: 100, logLevel: "error" });
  } catch (e) {
    // The parser's first line names the position and ends with ":" before its code frame.
    throw new Error(`not valid YAML/JSON: ${(e as Error).message.split("\n")[0]!.replace(/:$/, "")}`);
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc))
    throw new Error("the document must be a mapping");
  const { kind, version, ...rest } = doc as Record<string, unknown>;
  if (kind !== undefined && kind !== DOC_KIND) throw new Error(`kind must be "${DOC_KIND}"`);
  if (version !== undefined && version !== DOC_VERSION) throw new Error(`version must be ${DOC_VERSION}`);
  if (!Value.Check(WorkflowIn, rest)) {
    // With the draft check's own problems of the fields that passed, as the API's 400 lists them.
    const items = schemaItems(Value.Errors(WorkflowIn, rest));
    throw new DocumentError([...items, ...boundItems(WorkflowIn, rest, items)]);
  }
  // YAML's .inf and .nan, and a number past a double's range (1e400), which JSON cannot carry:
  // sent over the API (apply), a config held null where the file held the number.
  const steps = (rest as WorkflowInput).steps ?? [];
  const items = steps.flatMap((step, i) =>
    jsonHasOverflow(step.config ?? {})
      ? [{ field: `steps[${i}].config`, code: "invalid", message: `A step config ${NOT_JSON_NUMBER}.` }]
      : [],
  );
  if (items.length) throw new DocumentError(items);
  return rest as WorkflowInput;
}
