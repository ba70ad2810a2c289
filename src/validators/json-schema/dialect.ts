// Which dialect a schema is written in: its `$schema` names a draft, or a custom meta-schema the
// org stored (it arrives among the resources), whose own `$schema` chain ends at a draft and whose
// `$vocabulary` (2019-09, 2020-12) says which keywords mean anything. Without `$schema`, the
// step's draft applies (for a stored schema: the draft of the step that references it).
import { issue, isPlainObject } from "../shared/config-shape.ts";
import type { ConfigIssue } from "../types.ts";
import { type Draft, draftFromUri, vocabularyName } from "./drafts.ts";

export interface Dialect {
  draft: Draft;
  /** Enabled vocabulary names, when a custom meta-schema declares $vocabulary. */
  vocabularies?: Set<string>;
  /** The format-assertion vocabulary is on: `format` asserts whatever assert_formats says. */
  formatAssertion: boolean;
  /** The custom meta-schema the schema must satisfy, with its URI. */
  meta?: { uri: string; schema: Record<string, unknown> };
}

/** How many custom meta-schemas a $schema chain may pass through before a draft. */
const MAX_CHAIN = 8;

export function lookup(resources: Record<string, unknown>, uri: string): Record<string, unknown> | undefined {
  const bare = uri.replace(/#$/, "");
  const found = resources[uri] ?? resources[bare] ?? resources[`${bare}#`];
  return isPlainObject(found) ? found : undefined;
}

/** The dialect of `schema`; `fallback` when it declares none. A ConfigIssue when it cannot be used. */
export function dialectOf(
  schema: unknown,
  resources: Record<string, unknown>,
  fallback: Draft,
): Dialect | ConfigIssue {
  const declared = isPlainObject(schema) ? schema.$schema : undefined;
  if (typeof declared !== "string") return { draft: fallback, formatAssertion: false };
  const known = draftFromUri(declared);
  if (known) return { draft: known, formatAssertion: false };
  const meta = lookup(resources, declared);
  if (!meta)
    return issue(
      "schema",
      "unknown_draft",
      `$schema "${declared}" is neither a supported draft (4, 6, 7, 2019-09, 2020-12) nor a meta-schema ` +
        "stored by the organization (POST /api/v1/orgs/{org_slug}/schemas/)",
    );
  let draft: Draft | undefined;
  let cur: Record<string, unknown> | undefined = meta;
  for (let hop = 0; cur && hop < MAX_CHAIN && !draft; hop++) {
    const up: unknown = cur.$schema;
    if (typeof up !== "string") break;
    draft = draftFromUri(up);
    cur = draft ? undefined : lookup(resources, up);
  }
  if (!draft)
    return issue(
      "schema",
      "unknown_draft",
      `the meta-schema "${declared}" does not lead, through its own $schema, to a supported draft`,
    );
  const dialect: Dialect = { draft, formatAssertion: false, meta: { uri: declared, schema: meta } };
  if ((draft === "2019-09" || draft === "2020-12") && isPlainObject(meta.$vocabulary)) {
    dialect.vocabularies = new Set();
    for (const [uri, required] of Object.entries(meta.$vocabulary)) {
      const name = vocabularyName(uri);
      if (name) dialect.vocabularies.add(name);
      else if (required === true)
        // The spec's rule: a required vocabulary the implementation does not know is a refusal.
        return issue(
          "schema",
          "unknown_vocabulary",
          `the meta-schema "${declared}" requires the vocabulary "${uri}", which Assay does not implement`,
        );
    }
    dialect.formatAssertion = dialect.vocabularies.has("format-assertion");
  }
  return dialect;
}
