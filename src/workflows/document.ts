// A workflow as a document (workflows as code): what `assay workflows export` writes and
// `import` and `assay validate --local` read. YAML or JSON (JSON is YAML).
import YAML from "yaml";
import type { WorkflowInput } from "./service.ts";
import type { StepDef, Workflow } from "./types.ts";

export const DOC_KIND = "assay/workflow";
export const DOC_VERSION = 1;

export function toDocument(w: Workflow, steps: StepDef[]) {
  return {
    kind: DOC_KIND,
    version: DOC_VERSION,
    slug: w.slug,
    name: w.name,
    description: w.description,
    status: w.status,
    allowed_file_types: w.allowed_file_types,
    fail_fast: w.fail_fast,
    retention_days: w.retention_days,
    steps: steps.map((s) => ({
      name: s.name,
      validator: s.validator,
      is_active: s.is_active,
      config: s.config,
    })),
  };
}

export const stringifyDocument = (doc: object, format: "yaml" | "json") =>
  format === "json" ? `${JSON.stringify(doc, null, 2)}\n` : YAML.stringify(doc, { lineWidth: 0 });

/** Parses a document into the authoring API's input; throws Error with a readable message. */
export function parseDocument(text: string): WorkflowInput {
  let doc: unknown;
  try {
    doc = YAML.parse(text, { maxAliasCount: 100 });
  } catch (e) {
    throw new Error(`not valid YAML/JSON: ${(e as Error).message.split("\n")[0]}`);
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc))
    throw new Error("the document must be a mapping");
  const { kind, version, ...rest } = doc as Record<string, unknown>;
  if (kind !== undefined && kind !== DOC_KIND) throw new Error(`kind must be "${DOC_KIND}"`);
  if (version !== undefined && version !== DOC_VERSION) throw new Error(`version must be ${DOC_VERSION}`);
  return rest as WorkflowInput;
}
