// The validator catalogue: what each kind checks, which file types it supports and the JSON
// Schema of its step config. Any authenticated caller may read it.
import { Elysia, t } from "elysia";
import type { authPlugin } from "../http/auth.ts";
import { named } from "../http/openapi/named.ts";
import { AUTHED, errorResponses, Int } from "../http/schemas.ts";
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

export function validatorRoutes(auth: ReturnType<typeof authPlugin>) {
  const catalogue = VALIDATORS.map((v) => ({
    slug: v.slug,
    name: v.name,
    description: v.description,
    supported_file_types: [...v.supportedFileTypes],
    config_schema: v.configSchema,
  }));
  const body = { count: catalogue.length, next: null, previous: null, results: catalogue };
  return new Elysia().use(auth).get("/api/v1/validators/", () => body, {
    auth: true,
    response: {
      200: named(
        "ValidatorPage",
        t.Object({ count: Int(), next: t.Null(), previous: t.Null(), results: t.Array(ValidatorOut) }),
      ),
      ...errorResponses(...AUTHED),
    },
    detail: {
      tags: ["Validators"],
      operationId: "listValidators",
      summary: "The validator catalogue (all kinds, one page)",
    },
  });
}
