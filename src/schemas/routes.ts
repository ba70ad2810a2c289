// Org schema API: JSON Schemas a workflow step can $ref by URI, and XSD documents an xml_schema
// step can include or import (by URI or namespace). Viewer reads, Author writes;
// another org's schema is 404. A step snapshots what it references when saved (docs/decisions.md).
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import { AppError } from "../errors.ts";
import type { Principal, authPlugin } from "../http/auth.ts";
import { EnvelopeOf, PageQuery, envelope, parsePage } from "../http/pagination.ts";
import { AUTHED, errorResponses } from "../http/schemas.ts";
import { publicOrigin, publicUrl } from "../http/url.ts";
import { requireOrgRole } from "../orgs/access.ts";
import { KINDS, ListQuery, OrgParams, SchemaIn, SchemaListItem, SchemaOut, SchemaParams } from "./model.ts";
import type { OrgSchema, SchemaKind, SchemaSummary } from "./store.ts";

const presentItem = (s: SchemaSummary) => ({
  id: s.id,
  uri: s.uri,
  kind: s.kind,
  target_namespace: s.target_namespace,
  created_at: s.created_at,
  updated_at: s.updated_at,
});
const present = (s: OrgSchema) => ({ ...presentItem(s), schema: s.schema });

export function schemaRoutes(deps: Deps, auth: ReturnType<typeof authPlugin>) {
  const { orgs, config, schemas } = deps;
  const role = async (p: Parameters<typeof requireOrgRole>[1], slug: string, min: "viewer" | "author") =>
    (await requireOrgRole(orgs, p, slug, min)).org;
  const detail = { tags: ["Schemas"] };
  return new Elysia({ prefix: "/api/v1/orgs/:org_slug/schemas" })
    .use(auth)
    .get(
      "/",
      async ({ params, query, request, principal }) => {
        const org = await role(principal, params.org_slug, "viewer");
        const kind = query.kind;
        if (kind !== undefined && !(KINDS as readonly string[]).includes(kind))
          throw new AppError(400, "invalid_request", "Invalid value for kind.", [
            { field: "kind", code: "invalid", message: `kind is one of ${KINDS.join(", ")}.` },
          ]);
        const p = parsePage(query);
        const { count, items } = await schemas.list(
          org.id,
          p.limit,
          p.offset,
          kind as SchemaKind | undefined,
        );
        return envelope(publicUrl(config.base_url, request), p, count, items.map(presentItem));
      },
      {
        auth: true,
        params: OrgParams,
        query: t.Composite([t.Object(PageQuery), ListQuery], { additionalProperties: true }),
        response: { 200: EnvelopeOf(SchemaListItem), ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "listSchemas",
          summary: "List stored schemas (without their bodies); ?kind=xsd filters",
        },
      },
    )
    .post(
      "/",
      async ({ params, body, request, principal, actor, set }) => {
        const org = await role(principal, params.org_slug, "author");
        const s = await schemas.create(org.id, body, actor, deps.draftChecker);
        set.status = 201;
        set.headers.location = `${publicOrigin(config.base_url, request)}/api/v1/orgs/${org.slug}/schemas/${s.id}/`;
        return present(s);
      },
      {
        auth: "author",
        // An org at its most stored schemas: the 409 first (§13.2.1).
        preconditions: async (c: { params: { org_slug: string }; principal: Principal }) =>
          schemas.roomFor((await role(c.principal, c.params.org_slug, "author")).id),
        params: OrgParams,
        body: SchemaIn,
        response: { 201: SchemaOut, ...errorResponses(...AUTHED, 409) },
        detail: {
          ...detail,
          operationId: "createSchema",
          summary: "Store a JSON Schema or an XSD document under an absolute URI",
        },
      },
    )
    .get(
      "/:id/",
      async ({ params, principal }) => {
        const org = await role(principal, params.org_slug, "viewer");
        return present(await schemas.load(org.id, params.id));
      },
      {
        auth: true,
        preconditions: "read",
        params: SchemaParams,
        response: { 200: SchemaOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: { ...detail, operationId: "getSchema", summary: "A stored schema" },
      },
    )
    .put(
      "/:id/",
      async ({ params, body, principal, actor }) => {
        const org = await role(principal, params.org_slug, "author");
        return present(await schemas.replace(org.id, params.id, body, actor, deps.draftChecker));
      },
      {
        auth: "author",
        preconditions: async (c: { params: { org_slug: string; id: string }; principal: Principal }) =>
          schemas.load((await role(c.principal, c.params.org_slug, "author")).id, c.params.id),
        params: SchemaParams,
        body: SchemaIn,
        response: { 200: SchemaOut, ...errorResponses(...AUTHED, 409) },
        detail: {
          ...detail,
          operationId: "replaceSchema",
          summary: "Replace a stored schema (workflows saved earlier keep their snapshot)",
        },
      },
    )
    .delete(
      "/:id/",
      async ({ params, principal, actor, set }) => {
        const org = await role(principal, params.org_slug, "author");
        await schemas.remove(org.id, params.id, actor);
        set.status = 204;
      },
      {
        auth: "author",
        preconditions: async (c: { params: { org_slug: string; id: string }; principal: Principal }) =>
          schemas.load((await role(c.principal, c.params.org_slug, "author")).id, c.params.id),
        params: SchemaParams,
        response: { 204: t.Void(), ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "deleteSchema",
          summary: "Delete a stored schema (workflows saved earlier keep their snapshot)",
        },
      },
    );
}
