// Request and response schemas of the org schema API: shapes only. URI syntax, size and
// meta-validation of the schema are checked in service.ts.
import { t } from "elysia";
import { named } from "../http/openapi/named.ts";
import { Int } from "../http/schemas.ts";

export const SchemaIn = named(
  "StoredSchemaInput",
  t.Object(
    {
      uri: t.String({
        error: "must be a string",
        description: "Absolute URI, e.g. https://schemas.example.com/address.json or urn:…",
      }),
      schema: t.Record(t.String(), t.Unknown(), {
        error: "must be a JSON object",
        description: "The JSON Schema (an object, at most 1 MiB of JSON)",
      }),
    },
    { additionalProperties: false },
  ),
);

export const SchemaOut = named(
  "StoredSchema",
  t.Object({
    id: Int(),
    uri: t.String(),
    schema: t.Record(t.String(), t.Unknown()),
    created_at: t.String(),
    updated_at: t.String(),
  }),
);
/** The list leaves out the schema bodies (up to 1 MiB each): read one for its schema. */
export const SchemaListItem = named("StoredSchemaSummary", t.Omit(SchemaOut, ["schema"]));

export const OrgParams = t.Object({ org_slug: t.String() });
export const SchemaParams = t.Object({ org_slug: t.String(), id: t.String() });
