// The validators for a worker, each loaded on the first step of its kind: a worker that only
// validates JSON never loads libxml2's wasm (~34 MiB), CEL or the XML parser. The registry
// imports every validator's module too, but no module imports libxml2 itself
// (src/validators/shared/libxml.ts): the loaders of validators that may parse XML load it here,
// so their sync compile and validate find it ready. A worker's loop can wait for an import
// (src/jobs/worker.ts).
import { loadLibxml } from "./shared/libxml.ts";
import type { ValidatorDef } from "./types.ts";

/** Imports a validator's module, with libxml2 ready first when the validator may parse XML. */
async function withXml(def: Promise<ValidatorDef>): Promise<ValidatorDef> {
  const [loaded] = await Promise.all([def, loadLibxml()]);
  return loaded;
}

const LOADERS: Record<string, () => Promise<ValidatorDef>> = {
  syntax: () => withXml(import("./syntax/index.ts").then((m) => m.syntaxValidator)),
  json_schema: async () => (await import("./json-schema/index.ts")).jsonSchemaValidator,
  xml_schema: () => withXml(import("./xml-schema/index.ts").then((m) => m.xmlSchemaValidator)),
  schematron: () => withXml(import("./schematron/index.ts").then((m) => m.schematronValidator)),
  csv_table: async () => (await import("./csv-table/index.ts")).csvTableValidator,
  assertions: () => withXml(import("./assertions/index.ts").then((m) => m.assertionsValidator)),
  text_rules: async () => (await import("./text-rules/index.ts")).textRulesValidator,
};

/** Slugs this loader knows (a test checks they are the registry's). */
export const LOADABLE = Object.freeze(Object.keys(LOADERS));

/** The validator of `slug`, importing its module on first use; undefined when unknown. */
export async function loadValidator(slug: string): Promise<ValidatorDef | undefined> {
  return Object.hasOwn(LOADERS, slug) ? LOADERS[slug]() : undefined;
}
