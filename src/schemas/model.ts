// Request and response schemas of the org schema API: shapes only. URI syntax, size, the body's
// kind (a JSON object for a JSON Schema, a string of XML for an XSD) and its validity are checked
// in service.ts.
import { t } from "elysia";
import { documentedAs, documentedWith, named } from "../http/openapi/named.ts";
import { Int } from "../http/schemas.ts";
import { uriProblem } from "./service.ts";

const Kind = t.Union([t.Literal("json_schema"), t.Literal("xsd")], {
  error: 'must be "json_schema" or "xsd"',
  description: 'What the document is: "json_schema" (default) or "xsd" (an XML Schema document)',
});

export const SchemaIn = named(
  "StoredSchemaInput",
  t.Object(
    {
      // At most MAX_URI_LENGTH characters: checked in service.ts with the URI's syntax (uriProblem,
      // which a body the schema refuses is given too: src/http/errors.ts, boundItems).
      uri: documentedWith(
        t.String({
          error: "must be a string",
          description:
            "Absolute URI, e.g. https://schemas.example.com/address.json or urn:…; for an XSD, the URI that schemaLocations resolve to (relative ones against the including document's URI)",
        }),
        { minLength: 1, maxLength: 500 },
        uriProblem,
      ),
      kind: t.Optional(Kind),
      schema: t.Union([t.Record(t.String(), t.Unknown()), t.String()], {
        error: "must be a JSON object (json_schema) or a string of XML (xsd)",
        description:
          "The JSON Schema (an object, at most 1 MiB of JSON), or the XSD document's text (at most 8 MiB)",
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
    kind: Kind,
    target_namespace: t.Union([t.String(), t.Null()], {
      description: 'An XSD\'s targetNamespace ("" when it has none); null for a JSON Schema',
    }),
    schema: t.Union([t.Record(t.String(), t.Unknown()), t.String()]),
    created_at: t.String(),
    updated_at: t.String(),
  }),
);
/** The list leaves out the schema bodies (megabytes each): read one for its schema. */
export const SchemaListItem = named("StoredSchemaSummary", t.Omit(SchemaOut, ["schema"]));

export const OrgParams = t.Object({ org_slug: t.String() });
export const SchemaParams = t.Object({ org_slug: t.String(), id: t.String() });
export const KINDS = ["json_schema", "xsd"] as const;
// Checked by the route, as every list filter is, so the item names `kind` (not `query.kind`).
export const ListQuery = t.Object(
  {
    kind: t.Optional(
      documentedAs(t.String(), {
        type: "string",
        enum: [...KINDS],
        description: "Only schemas of this kind",
      }),
    ),
  },
  { additionalProperties: true },
);
