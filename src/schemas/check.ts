// The check of a stored JSON Schema: meta-validation, its references, a compile. It runs on the
// workflow check thread (src/workflows/check-thread.ts), as a workflow's draft does, never on the
// HTTP thread: a 290 KB schema whose $defs form a chain of 8,000 `$ref`s held the HTTP thread
// 25 s before it was refused (docs/security.md).
import { invalid } from "../errors.ts";
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
