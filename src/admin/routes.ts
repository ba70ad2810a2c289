// Instance administration (instance admins only): users, organizations, instance settings.
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import { conflict, invalidField, notFound } from "../errors.ts";
import type { authPlugin } from "../http/auth.ts";
import { EnvelopeOf, PageQuery, envelope, parsePage } from "../http/pagination.ts";
import { untaggedRefusal } from "../http/preconditions.ts";
import { documentedWith, named } from "../http/openapi/named.ts";
import { AUTHED, BOUNDS, Chars, errorResponses, Int } from "../http/schemas.ts";
import { publicOrigin, publicUrl } from "../http/url.ts";
import { requireInstanceAdmin } from "../orgs/access.ts";
import { OrgOut, presentOrg } from "../orgs/model.ts";
import { createOrgService, orgNameProblem, orgSlugProblem, refuseDeletedOrg } from "../orgs/service.ts";
import { UserOut, presentUser } from "../users/routes.ts";
import { createUser, emailProblem, newPasswordProblem, usernameProblem } from "../users/service.ts";

// Int, never t.Integer: a JSON body takes no numbers written as text (src/http/schemas.ts).
const Days = t.Nullable(Int({ minimum: 1, maximum: 36500 }), {
  error: "must be an integer from 1 to 36500 or null",
});
const SettingsOut = named(
  "InstanceSettings",
  t.Object({
    token_default_ttl_days: t.Nullable(Int()),
    token_max_ttl_days: t.Nullable(Int()),
    token_rotation_days: t.Nullable(Int()),
    audit_retention_days: t.Nullable(
      Int({ description: "Audit entries older than this many days are purged; null keeps them" }),
    ),
  }),
);

export function adminRoutes(deps: Deps, auth: ReturnType<typeof authPlugin>) {
  const { users, orgs, settings, config } = deps;
  const orgService = createOrgService(orgs, users);
  const detail = { tags: ["Administration"] };
  const findOrg = async (slug: string) => {
    const o = await orgs.getBySlug(slug);
    if (!o) throw notFound("Organization");
    return o;
  };
  return new Elysia({ prefix: "/api/v1/admin" })
    .use(auth)
    .get(
      "/users/",
      async ({ query, request, principal }) => {
        requireInstanceAdmin(principal);
        const p = parsePage(query);
        const { count, items } = await users.list(p.limit, p.offset);
        return envelope(publicUrl(config.base_url, request), p, count, items.map(presentUser));
      },
      {
        auth: true,
        query: t.Object(PageQuery, { additionalProperties: true }),
        response: { 200: EnvelopeOf(UserOut), ...errorResponses(...AUTHED) },
        detail: { ...detail, operationId: "adminListUsers", summary: "List users" },
      },
    )
    .post(
      "/users/",
      async ({ body, set, principal, actor, request }) => {
        requireInstanceAdmin(principal);
        const user = presentUser(await createUser(users, body, actor));
        set.status = 201;
        set.headers.location = `${publicOrigin(config.base_url, request)}/api/v1/admin/users/${encodeURIComponent(user.username)}/`;
        return user;
      },
      {
        auth: true,
        preconditions: "exists",
        body: t.Object(
          {
            username: documentedWith(
              t.String({ error: "must be a string" }),
              BOUNDS.username,
              usernameProblem,
            ),
            password: t.Optional(
              documentedWith(t.String({ error: "must be a string" }), BOUNDS.password, newPasswordProblem),
            ),
            name: t.Optional(Chars(200, { error: "must be a string of at most 200 characters" })),
            email: t.Optional(
              documentedWith(t.String({ error: "must be a string" }), BOUNDS.email, emailProblem),
            ),
            is_admin: t.Optional(t.Boolean({ error: "must be true or false" })),
          },
          { additionalProperties: false },
        ),
        response: { 201: UserOut, ...errorResponses(...AUTHED, 409) },
        detail: { ...detail, operationId: "adminCreateUser", summary: "Create a user" },
      },
    )
    .get(
      "/users/:username/",
      async ({ params, principal }) => {
        requireInstanceAdmin(principal);
        const u = await users.getByUsername(params.username);
        if (!u) throw notFound("User");
        return presentUser(u);
      },
      {
        auth: true,
        preconditions: "read",
        params: t.Object({ username: t.String() }),
        response: { 200: UserOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: { ...detail, operationId: "adminGetUser", summary: "A user" },
      },
    )
    .delete(
      "/users/:username/",
      async ({ params, set, principal, actor, request }) => {
        requireInstanceAdmin(principal);
        const u = await users.getByUsername(params.username);
        if (!u) throw notFound("User");
        // A user has no entity tag: If-Match / If-None-Match are judged in the deleting
        // transaction, after the 404 and the last admin's 409 (RFC 9110 §13.2.1).
        const refusal = untaggedRefusal(request.headers);
        // Someone must be left to administer the instance through the API (checked as it deletes).
        const done = await users.delete(u.id, actor, !!refusal);
        if (done === "last_admin")
          throw conflict("The last instance administrator cannot be deleted; make another user admin first.");
        if (!done) throw notFound("User");
        if (done === "refused" && refusal) throw refusal;
        set.status = 204;
      },
      {
        auth: true,
        preconditions: "own",
        params: t.Object({ username: t.String() }),
        response: { 204: t.Void(), ...errorResponses(...AUTHED, 409) },
        detail: {
          ...detail,
          operationId: "adminDeleteUser",
          summary: "Delete a user: their tokens stop working at once",
        },
      },
    )
    .get(
      "/orgs/",
      async ({ query, request, principal }) => {
        requireInstanceAdmin(principal);
        const p = parsePage(query);
        const { count, items } = await orgs.list({ includeDeleted: true, limit: p.limit, offset: p.offset });
        return envelope(
          publicUrl(config.base_url, request),
          p,
          count,
          items.map((o) => presentOrg(o, false)),
        );
      },
      {
        auth: true,
        query: t.Object(PageQuery, { additionalProperties: true }),
        response: { 200: EnvelopeOf(OrgOut), ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "adminListOrgs",
          summary: "List all organizations (deleted included)",
        },
      },
    )
    .post(
      "/orgs/",
      async ({ body, set, principal, actor, request }) => {
        requireInstanceAdmin(principal);
        // An org needs an Admin to be managed through the API: the named user, else the caller.
        const admin = body.admin === undefined ? principal.user : await users.getByUsername(body.admin);
        if (!admin) throw invalidField("admin", `There is no user "${body.admin}".`, "not_found");
        const org = await orgService.create(body.org_slug, body.name, actor, admin);
        set.status = 201;
        // The admin's view of it: the creator may have named another user its first Admin, and
        // /api/v1/orgs/{slug}/ answers only members.
        set.headers.location = `${publicOrigin(config.base_url, request)}/api/v1/admin/orgs/${org.slug}/`;
        return presentOrg(org, false);
      },
      {
        auth: true,
        preconditions: "exists",
        body: t.Object(
          {
            org_slug: documentedWith(t.String({ error: "must be a string" }), BOUNDS.orgSlug, orgSlugProblem),
            name: t.Optional(
              documentedWith(t.String({ error: "must be a string" }), BOUNDS.name, orgNameProblem),
            ),
            admin: t.Optional(
              t.String({ maxLength: 64, error: "must be a username", description: "Default: you" }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: OrgOut, ...errorResponses(...AUTHED, 409) },
        detail: {
          ...detail,
          operationId: "adminCreateOrg",
          summary: "Create an organization with its first Admin (default: you)",
        },
      },
    )
    .get(
      "/orgs/:org_slug/",
      async ({ params, principal }) =>
        requireInstanceAdmin(principal) ?? presentOrg(await findOrg(params.org_slug), false),
      {
        auth: true,
        preconditions: "read",
        params: t.Object({ org_slug: t.String() }),
        response: { 200: OrgOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
        detail: {
          ...detail,
          operationId: "adminGetOrg",
          summary: "An organization, whatever its state (deleted included)",
        },
      },
    )
    .post(
      "/orgs/:org_slug/suspend/",
      async ({ params, principal, actor }) => {
        requireInstanceAdmin(principal);
        const o = await findOrg(params.org_slug);
        // Checked again where it is written: deleted meanwhile (another request or node).
        const deleted = (now: { slug: string; deleted_at: string | null }) =>
          refuseDeletedOrg(now, `POST /api/v1/admin/orgs/${o.slug}/restore/`);
        deleted(o);
        return presentOrg(
          await orgs.update(o.id, { status: "suspended" }, actor, "org.suspend", deleted),
          false,
        );
      },
      {
        auth: true,
        // A deleted org: the 409 first (RFC 9110 §13.2.1).
        preconditions: async (c: { params: { org_slug: string } }) => {
          const o = await findOrg(c.params.org_slug);
          refuseDeletedOrg(o, `POST /api/v1/admin/orgs/${o.slug}/restore/`);
        },
        params: t.Object({ org_slug: t.String() }),
        response: { 200: OrgOut, ...errorResponses(...AUTHED, 409) },
        detail: {
          ...detail,
          operationId: "adminSuspendOrg",
          summary: "Suspend: members get 403 until restored",
          description: "A deleted organization is refused (409 `conflict`): restore it first.",
        },
      },
    )
    .post(
      "/orgs/:org_slug/restore/",
      async ({ params, principal, actor }) => {
        requireInstanceAdmin(principal);
        const o = await orgs.update(
          (await findOrg(params.org_slug)).id,
          { status: "active", deleted_at: null },
          actor,
          "org.restore",
        );
        deps.webhookDispatcher.wake(); // its webhooks' deliveries held while it was not active
        return presentOrg(o, false);
      },
      {
        auth: true,
        preconditions: (c: { params: { org_slug: string } }) => findOrg(c.params.org_slug),
        params: t.Object({ org_slug: t.String() }),
        response: { 200: OrgOut, ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "adminRestoreOrg",
          summary: "Restore a suspended or deleted organization",
        },
      },
    )
    .delete(
      "/orgs/:org_slug/",
      async ({ params, set, principal, actor }) => {
        requireInstanceAdmin(principal);
        const o = await findOrg(params.org_slug);
        await orgs.update(
          o.id,
          { deleted_at: o.deleted_at ?? new Date().toISOString() },
          actor,
          "org.delete",
        );
        set.status = 204;
      },
      {
        auth: true,
        preconditions: (c: { params: { org_slug: string } }) => findOrg(c.params.org_slug),
        params: t.Object({ org_slug: t.String() }),
        response: { 204: t.Void(), ...errorResponses(...AUTHED) },
        detail: { ...detail, operationId: "adminDeleteOrg", summary: "Delete (soft) an organization" },
      },
    )
    .get("/settings/", ({ principal }) => requireInstanceAdmin(principal) ?? settings.get(), {
      auth: true,
      preconditions: "read",
      response: { 200: SettingsOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
      detail: {
        ...detail,
        operationId: "getSettings",
        summary: "Instance settings (token policies, audit retention)",
      },
    })
    .patch(
      "/settings/",
      ({ body, principal, actor }) => requireInstanceAdmin(principal) ?? settings.update(body, actor),
      {
        auth: true,
        preconditions: "exists",
        body: t.Object(
          {
            token_default_ttl_days: t.Optional(Days),
            token_max_ttl_days: t.Optional(Days),
            token_rotation_days: t.Optional(Days),
            audit_retention_days: t.Optional(Days),
          },
          { additionalProperties: false },
        ),
        response: { 200: SettingsOut, ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "updateSettings",
          summary: "Change token policies and the audit log's retention",
        },
      },
    );
}
