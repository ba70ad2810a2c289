// Who am I: the user, their orgs with roles, and the token in use (for checking a token).
import { Elysia, t } from "elysia";
import type { Deps } from "../deps.ts";
import type { Principal, authPlugin } from "../http/auth.ts";
import { named } from "../http/openapi/named.ts";
import { AUTHED, errorResponses, Int, OneOf } from "../http/schemas.ts";
import { ORG_STATUSES, ROLES } from "../orgs/store.ts";
import { TokenOut, presentToken } from "../tokens/routes.ts";
import type { User } from "./store.ts";

export const UserOut = named(
  "User",
  t.Object({
    id: Int(),
    username: t.String(),
    name: t.String(),
    email: t.String(),
    is_admin: t.Boolean(),
    created_at: t.String(),
  }),
);
export const presentUser = (u: User) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  email: u.email,
  is_admin: u.is_admin,
  created_at: u.created_at,
});

const MeOut = named(
  "Me",
  t.Composite([
    UserOut,
    t.Object({
      orgs: t.Array(
        t.Object({ org_slug: t.String(), name: t.String(), status: OneOf(ORG_STATUSES), role: OneOf(ROLES) }),
      ),
      token: t.Nullable(TokenOut),
    }),
  ]),
);

export function meRoutes(deps: Deps, auth: ReturnType<typeof authPlugin>) {
  const handler = async ({ principal }: { principal: Principal }) => {
    const { items } = await deps.orgs.listForUser(principal.user.id);
    return {
      ...presentUser(principal.user),
      orgs: items.map((o) => ({ org_slug: o.slug, name: o.name, status: o.status, role: o.role! })),
      // With this very use: authentication records it in memory (written in batches).
      token: principal.token ? presentToken(deps.tokens.withLastUse(principal.token)) : null,
    };
  };
  const opts = (operationId: string, summary: string) => ({
    auth: true as const,
    preconditions: "read" as const,
    response: { 200: MeOut, 304: t.Void(), ...errorResponses(...AUTHED, 412) },
    detail: { tags: ["Users"], operationId, summary },
  });
  return new Elysia()
    .use(auth)
    .get(
      "/api/v1/users/me/",
      handler,
      opts("getMe", "The authenticated user, their orgs and roles, and the token in use"),
    )
    .get("/api/v1/auth/me/", handler, opts("getAuthMe", "The same as GET /api/v1/users/me/ (an alias)"));
}
