// The validator catalogue: what each kind checks, which file types it supports and the JSON
// Schema of its step config. Any authenticated caller may read it; paginated like every list
// (CONTRACT §3), though it fits in one page today.
import { Elysia, t } from "elysia";
import type { Config } from "../config.ts";
import type { authPlugin } from "../http/auth.ts";
import { named } from "../http/openapi/named.ts";
import { EnvelopeOf, PageQuery, envelope, parsePage } from "../http/pagination.ts";
import { AUTHED, errorResponses } from "../http/schemas.ts";
import { publicUrl } from "../http/url.ts";
import { VALIDATORS } from "./registry.ts";

const ValidatorOut = named(
  "Validator",
  t.Object({
    slug: t.String(),
    name: t.String(),
    description: t.String(),
    supported_file_types: t.Array(t.String()),
    config_schema: t.Record(t.String(), t.Unknown(), { description: "JSON Schema of a step's config" }),
  }),
);

export function validatorRoutes(config: Config, auth: ReturnType<typeof authPlugin>) {
  const catalogue = VALIDATORS.map((v) => ({
    slug: v.slug,
    name: v.name,
    description: v.description,
    supported_file_types: [...v.supportedFileTypes],
    config_schema: v.configSchema,
  }));
  return new Elysia().use(auth).get(
    "/api/v1/validators/",
    ({ query, request }) => {
      const p = parsePage(query);
      const items = catalogue.slice(p.offset, p.offset + p.limit);
      return envelope(publicUrl(config.base_url, request), p, catalogue.length, items);
    },
    {
      auth: true,
      query: t.Object(PageQuery, { additionalProperties: true }),
      response: { 200: EnvelopeOf(ValidatorOut), ...errorResponses(...AUTHED) },
      detail: {
        tags: ["Validators"],
        operationId: "listValidators",
        summary: "The validator catalogue",
      },
    },
  );
}
