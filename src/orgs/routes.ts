// Organizations and members (CONTRACT §3): members read (Viewer), admins write.
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import { fieldProblem, notFound } from "../errors.ts";
import type { authPlugin } from "../http/auth.ts";
import { EnvelopeOf, PageQuery, envelope, parsePage } from "../http/pagination.ts";
import { untaggedRefusal } from "../http/preconditions.ts";
import { documentedWith } from "../http/openapi/named.ts";
import { AUTHED, BOUNDS, errorResponses } from "../http/schemas.ts";
import { publicOrigin, publicUrl } from "../http/url.ts";
import { requireOrgRole } from "./access.ts";
import { MemberOut, OrgOut, RoleSchema, presentMember, presentOrg } from "./model.ts";
import { createOrgService, memberUsernameProblem, orgNameProblem } from "./service.ts";

const OrgParams = t.Object({ org_slug: t.String() });
const MemberParams = t.Object({ org_slug: t.String(), username: t.String() });

export function orgRoutes(deps: Deps, auth: ReturnType<typeof authPlugin>) {
  const { orgs, users, config } = deps;
  const service = createOrgService(orgs, users);
  const detail = { tags: ["Organizations"] };
  return new Elysia({ prefix: "/api/v1/orgs" })
    .use(auth)
    .get(
      "/",
      async ({ query, request, principal }) => {
        const p = parsePage(query);
        const { count, items } = await orgs.listForUser(principal.user.id, p.limit, p.offset);
        return envelope(
          publicUrl(config.base_url, request),
          p,
          count,
          items.map((o) => presentOrg(o)),
        );
      },
      {
        auth: true,
        query: t.Object(PageQuery, { additionalProperties: true }),
        response: { 200: EnvelopeOf(OrgOut), ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "listOrgs",
          summary: "Organizations you belong to, with your role",
        },
      },
    )
    .get(
      "/:org_slug/",
      async ({ params, principal }) =>
        presentOrg((await requireOrgRole(orgs, principal, params.org_slug, "viewer")).org),
      {
        auth: true,
        preconditions: "read",
        params: OrgParams,
        response: { 200: OrgOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: { ...detail, operationId: "getOrg", summary: "Organization detail" },
      },
    )
    .patch(
      "/:org_slug/",
      async ({ params, body, principal, actor }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "admin");
        const nameProblem = body.name === undefined ? null : orgNameProblem(body.name);
        if (nameProblem) throw fieldProblem("name", nameProblem);
        return presentOrg({ ...(await orgs.update(org.id, { name: body.name }, actor)), role: org.role });
      },
      {
        auth: "admin",
        preconditions: "exists",
        params: OrgParams,
        body: t.Object(
          {
            name: t.Optional(
              documentedWith(t.String({ error: "must be a string" }), BOUNDS.name, orgNameProblem),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: OrgOut, ...errorResponses(...AUTHED) },
        detail: { ...detail, operationId: "updateOrg", summary: "Rename (Admin)" },
      },
    )
    .delete(
      "/:org_slug/",
      async ({ params, principal, actor, set }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "admin");
        await orgs.update(org.id, { deleted_at: new Date().toISOString() }, actor, "org.delete");
        set.status = 204;
      },
      {
        auth: "admin",
        preconditions: "exists",
        params: OrgParams,
        response: { 204: t.Void(), ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "deleteOrg",
          summary: "Delete (soft; members then get 403) (Admin)",
        },
      },
    )
    .get(
      "/:org_slug/members/",
      async ({ params, query, request, principal }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        const p = parsePage(query);
        const { count, items } = await orgs.members(org.id, p.limit, p.offset);
        return envelope(publicUrl(config.base_url, request), p, count, items.map(presentMember));
      },
      {
        auth: true,
        params: OrgParams,
        query: t.Object(PageQuery, { additionalProperties: true }),
        response: { 200: EnvelopeOf(MemberOut), ...errorResponses(...AUTHED) },
        detail: { ...detail, operationId: "listMembers", summary: "Members and roles" },
      },
    )
    .post(
      "/:org_slug/members/",
      async ({ params, body, principal, actor, set, request }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "admin");
        const member = presentMember(await service.addMember(org.id, body.username, body.role, actor));
        set.status = 201;
        set.headers.location = `${publicOrigin(config.base_url, request)}/api/v1/orgs/${org.slug}/members/${encodeURIComponent(member.username)}/`;
        return member;
      },
      {
        auth: "admin",
        preconditions: "exists",
        params: OrgParams,
        body: t.Object(
          {
            username: documentedWith(
              t.String({ error: "must be a string" }),
              BOUNDS.username,
              memberUsernameProblem,
            ),
            role: RoleSchema,
          },
          { additionalProperties: false },
        ),
        response: { 201: MemberOut, ...errorResponses(...AUTHED, 409) },
        detail: { ...detail, operationId: "addMember", summary: "Add a member (Admin)" },
      },
    )
    .get(
      "/:org_slug/members/:username/",
      async ({ params, principal }) => {
        // Access first (a non-member gets 403 whoever the username names), then the member.
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
        const m = await orgs.member(org.id, params.username);
        if (!m) throw notFound("Member");
        return presentMember(m);
      },
      {
        auth: true,
        preconditions: "read",
        params: MemberParams,
        response: { 200: MemberOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: { ...detail, operationId: "getMember", summary: "A member and their role" },
      },
    )
    .patch(
      "/:org_slug/members/:username/",
      async ({ params, body, principal, actor, request }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "admin");
        const refusal = untaggedRefusal(request.headers); // a member has no entity tag
        return presentMember(await service.setRole(org.id, params.username, body.role, actor, refusal));
      },
      {
        auth: "admin",
        // Judged in the transaction that changes the role, after the last admin's 409 (§13.2.1).
        preconditions: "own",
        params: MemberParams,
        body: t.Object({ role: RoleSchema }, { additionalProperties: false }),
        response: { 200: MemberOut, ...errorResponses(...AUTHED, 409) },
        detail: {
          ...detail,
          operationId: "updateMember",
          summary: "Change a role (Admin; the last admin stays)",
        },
      },
    )
    .delete(
      "/:org_slug/members/:username/",
      async ({ params, principal, actor, set, request }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "admin");
        await service.removeMember(org.id, params.username, actor, untaggedRefusal(request.headers));
        set.status = 204;
      },
      {
        auth: "admin",
        // Judged in the transaction that changes the role, after the last admin's 409 (§13.2.1).
        preconditions: "own",
        params: MemberParams,
        response: { 204: t.Void(), ...errorResponses(...AUTHED, 409) },
        detail: {
          ...detail,
          operationId: "removeMember",
          summary: "Remove a member (Admin; the last admin stays)",
        },
      },
    );
}
