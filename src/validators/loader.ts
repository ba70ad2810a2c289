// The validators for a worker, each loaded on the first step of its kind: a worker that only
// validates JSON never loads libxml2's wasm (~20 MiB), CEL or the XML parser. The registry
// imports every engine up front, as save-time checks need them synchronously; a worker needs
// only compile, and its loop can wait for an import (src/jobs/worker.ts).
import type { ValidatorDef } from "./types.ts";

const LOADERS: Record<string, () => Promise<ValidatorDef>> = {
  syntax: async () => (await import("./syntax/index.ts")).syntaxValidator,
  json_schema: async () => (await import("./json-schema/index.ts")).jsonSchemaValidator,
  xml_schema: async () => (await import("./xml-schema/index.ts")).xmlSchemaValidator,
  csv_table: async () => (await import("./csv-table/index.ts")).csvTableValidator,
  assertions: async () => (await import("./assertions/index.ts")).assertionsValidator,
  text_rules: async () => (await import("./text-rules/index.ts")).textRulesValidator,
};

/** Slugs this loader knows (a test checks they are the registry's). */
export const LOADABLE = Object.freeze(Object.keys(LOADERS));

/** The validator of `slug`, importing its module on first use; undefined when unknown. */
export async function loadValidator(slug: string): Promise<ValidatorDef | undefined> {
  return Object.hasOwn(LOADERS, slug) ? LOADERS[slug]() : undefined;
}
