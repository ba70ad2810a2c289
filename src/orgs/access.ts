// Org-scoped authorization, in the contract's order: unknown org → 404; not a member, deleted or
// suspended org (told to members only), or role too low → 403. The access answer comes from an exact cache
// (src/db/generation.ts): a removal, a lower role or a suspension acts on the next request.
import type { Principal } from "../http/auth.ts";
import { forbidden, notFound } from "../errors.ts";
import { type OrgAccess, type OrgStore, type Role, roleRank } from "./store.ts";

export interface OrgContext {
  org: OrgAccess;
  role: Role;
}

export async function requireOrgRole(
  orgs: OrgStore,
  p: Principal,
  slug: string,
  min: Role,
): Promise<OrgContext> {
  const org = await orgs.access(p.user.id, slug, p.generation);
  if (!org) throw notFound("Organization");
  // Membership first: an outsider learns nothing of the org's state (deleted, suspended).
  if (!org.role) throw forbidden("You are not a member of this organization.");
  if (org.deleted_at) throw forbidden("The organization has been deleted.");
  if (org.status !== "active") throw forbidden("The organization is suspended.");
  if (roleRank(org.role) < roleRank(min)) throw forbidden(`This action needs the ${min} role or higher.`);
  return { org, role: org.role };
}

/** Throws 403 unless the caller is an instance admin; returns undefined so it chains with `??`. */
export const requireInstanceAdmin = (p: Principal): undefined => {
  if (!p.user.is_admin) throw forbidden("This action needs an instance administrator.");
  return undefined;
};
