// The check of a stored JSON Schema (meta-validation, its references, a compile) and of a stored
// XSD document (a parse). Both run on the workflow check thread (src/workflows/check-thread.ts),
// as a workflow's draft does, never on the HTTP thread: a 290 KB schema whose $defs form a chain
// of 8,000 `$ref`s held the HTTP thread 25 s before it was refused, an 8 MB XSD 0.68 s
// (docs/security.md).
import { invalid } from "../errors.ts";
import {
  isXsdRoot,
  parseXsd,
  resolveSchemaSet,
  targetNamespaceOf,
  XSD_NS,
} from "../validators/xml-schema/documents.ts";
import { checkJsonSchemaConfig } from "../validators/json-schema/index.ts";
import { clipIssue } from "../workflows/check.ts";

/**
 * A stored schema that declares no $schema is read in the draft of each step that references it
 * (and checked in that draft when the step is saved), so here it only has to be valid in one of
 * them: a draft-7 `"$id": "#foo"` is an anchor there, not an error. Issues of 2020-12 otherwise.
 */
function issuesOf(schema: Record<string, unknown>, resources: Record<string, unknown>, uri: string) {
  const issues = checkJsonSchemaConfig({ schema }, { resources, uri });
  if (issues.length === 0 || typeof schema.$schema === "string") return issues;
  const fits = (["2019-09", "7", "6", "4"] as const).some(
    (draft) => checkJsonSchemaConfig({ schema, draft }, { resources, uri }).length === 0,
  );
  return fits ? [] : issues;
}

/** Throws the 400 of a stored JSON Schema that is not valid, with the org's schemas it references. */
export function checkStoredSchema(
  schema: Record<string, unknown>,
  resources: Record<string, unknown>,
  uri: string,
): void {
  const issues = issuesOf(schema, resources, uri);
  if (issues.length > 0)
    throw invalid(
      "The schema is invalid.",
      issues.map((i) => ({ field: i.field || "schema", code: i.code, message: clipIssue(i.message) })),
    );
}

const xsdError = (message: string) =>
  invalid("The schema is invalid.", [{ field: "schema", code: "invalid_schema", message }]);

/**
 * Throws the 400 of a stored XSD document that is not well-formed or not rooted in xs:schema;
 * else its targetNamespace. libxml2 must be loaded (prepareChecks(["xml_schema"])).
 */
export function checkStoredXsd(text: string, uri: string): string {
  let doc: ReturnType<typeof parseXsd>;
  try {
    doc = parseXsd(text, uri);
  } catch (e) {
    const detail = (e as { details?: Array<{ line: number; message: string }> }).details?.[0];
    const where = detail && detail.line > 0 ? `line ${detail.line}: ` : "";
    throw xsdError(`is not well-formed XML: ${where}${(detail?.message ?? String(e)).trim()}`);
  }
  try {
    if (!isXsdRoot(doc))
      throw xsdError(`The root element must be schema in the namespace ${XSD_NS}; found ${doc.root.name}.`);
    return targetNamespaceOf(doc);
  } finally {
    doc.dispose();
  }
}

/** A step's schema set to walk from; `step`, its index in the draft (named if the walk runs too long). */
export type XsdRoot = ({ text: string; uri: null } | { uri: string }) & { step?: number };
export interface XsdWanted {
  uris: string[];
  namespaces: string[];
}

/**
 * The locations and namespaces the roots' schema sets reach that `found` cannot answer: one round
 * of the walk through the org's stored XSDs (src/schemas/service.ts, storedXsdSet). It parses every
 * document it reaches, so it runs on the check thread too. libxml2 must be loaded.
 */
export function xsdWanted(
  roots: XsdRoot[],
  found: Record<string, string>,
  onRoot: (root: XsdRoot) => void = () => {},
): XsdWanted {
  const uris = new Set<string>();
  const namespaces = new Set<string>();
  for (const root of roots) {
    onRoot(root);
    const { wanted } = resolveSchemaSet(root, found);
    for (const u of wanted.uris) uris.add(u);
    for (const n of wanted.namespaces) namespaces.add(n);
  }
  return { uris: [...uris], namespaces: [...namespaces] };
}
