import { t } from "elysia";
import { named } from "../http/openapi/named.ts";
import { OneOf, OneOfOrNull } from "../http/schemas.ts";
import { type Member, ORG_STATUSES, type Org, type OrgAccess, ROLES } from "./store.ts";

export const RoleSchema = t.Union(
  [t.Literal("viewer"), t.Literal("executor"), t.Literal("author"), t.Literal("admin")],
  {
    error: "must be one of viewer, executor, author, admin",
  },
);
export const OrgOut = named(
  "Organization",
  t.Object({
    org_slug: t.String(),
    name: t.String(),
    status: OneOf(ORG_STATUSES),
    created_at: t.String(),
    // Always sent, null while the org lives, as every other resource sends its nullable fields
    // (tokens' revoked_at, webhooks' disabled_at): typed clients read one shape.
    deleted_at: t.Nullable(t.String()),
    role: t.Optional(OneOfOrNull(ROLES, "Your role in it")),
  }),
);
export const MemberOut = named(
  "Member",
  t.Object({
    username: t.String(),
    name: t.String(),
    role: OneOf(ROLES),
    created_at: t.String(),
  }),
);

export const presentOrg = (o: Org | OrgAccess, withRole = true) => ({
  org_slug: o.slug,
  name: o.name,
  status: o.status,
  created_at: o.created_at,
  deleted_at: o.deleted_at ?? null,
  ...(withRole && "role" in o ? { role: o.role } : {}),
});
export const presentMember = (m: Member) => ({
  username: m.username,
  name: m.name,
  role: m.role,
  created_at: m.created_at,
});
