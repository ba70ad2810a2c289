// Organization and membership rules: slugs, the last-admin guard, soft deletion.
import type { Actor } from "../audit/types.ts";
import { ReferenceGone } from "../db/program.ts";
import {
  type AppError,
  type Problem,
  conflict,
  invalid,
  invalidBecause,
  invalidField,
  notFound,
  throwProblems,
} from "../errors.ts";
import { usernameProblem } from "../users/service.ts";
import type { UserStore } from "../users/store.ts";
import { type OrgStore, ROLES, type Role } from "./store.ts";
import { charCount, NAME_CHARACTERS, nameCharactersOk, quote } from "../lib/text.ts";

const ORG_SLUG_RE = /^[a-z][a-z0-9-]{0,62}$/;

export function orgSlugProblem(slug: string): Problem | null {
  return ORG_SLUG_RE.test(slug)
    ? null
    : invalidBecause(
        "An org slug is 1 to 63 characters: lowercase letters, digits and -, starting with a letter.",
      );
}
/** An org's name: its length, blank or not (the first of orgNameProblem's checks). */
export function orgNameLengthProblem(name: string): Problem | null {
  return charCount(name) > 200 || !name.trim() ? invalidBecause("A name of 1 to 200 characters.") : null;
}
/** An org's name, as creating or renaming one checks it. */
export function orgNameProblem(name: string): Problem | null {
  return (
    orgNameLengthProblem(name) ??
    (nameCharactersOk(name) ? null : invalidBecause(`A name ${NAME_CHARACTERS}.`))
  );
}
/** The member to add does not exist. */
export const noSuchUser = (username: string): Problem => ({
  code: "not_found",
  message: `There is no user ${quote(username)}.`,
});
/**
 * A username to add as a member, checked without the database: one that no user can have (every
 * user's name passed usernameProblem when created: users/service.ts, setup/service.ts) is the
 * item the lookup would give, so a body the schema refuses reports it with the rest.
 */
export const memberUsernameProblem = (username: string): Problem | null =>
  usernameProblem(username) ? noSuchUser(username) : null;
export function checkRole(role: string, field = "role"): Role {
  if (!(ROLES as readonly string[]).includes(role))
    throw invalidField(field, `The role must be one of ${ROLES.join(", ")}.`);
  return role as Role;
}

/**
 * A deleted org keeps its slug (its runs and history stay, and `restore` brings it back under the
 * same name): a new org cannot take it. Decision: docs/decisions.md.
 */
export const deletedSlugMessage = (slug: string) =>
  `The organization slug "${slug}" is taken by a deleted organization; restore it with \`assay orgs restore ${slug}\`, or choose another slug.`;

/**
 * A deleted org changes only by being restored: suspended, or given members, it would still be
 * deleted (its members get 403 either way), and `restore` makes it active whatever was done to it
 * meanwhile. So such a change is refused, not done silently. `restore`: how the caller restores
 * one (`assay orgs restore SLUG`, or the admin API's POST). Decision: docs/decisions.md.
 */
export function refuseDeletedOrg(org: { slug: string; deleted_at: string | null }, restore: string) {
  if (org.deleted_at)
    throw conflict(`The organization "${org.slug}" has been deleted; restore it first (${restore}).`);
}

/** `p`, or the error `gone()` gives when its user was deleted before it wrote (a foreign key). */
async function whileUserExists<T>(p: Promise<T>, gone: () => Error): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw e instanceof ReferenceGone ? gone() : e;
  }
}

export function createOrgService(orgs: OrgStore, users: UserStore) {
  return {
    /** A new org; with `admin`, that user becomes its first Admin in the same transaction. */
    async create(
      slug: string,
      name: string | undefined,
      actor: Actor,
      admin?: { id: number; username: string },
    ) {
      throwProblems([
        ["org_slug", orgSlugProblem(slug)],
        ["name", name === undefined ? null : orgNameProblem(name)],
      ]);
      if ((await orgs.getBySlug(slug))?.deleted_at) {
        const message = deletedSlugMessage(slug);
        throw conflict(message, [{ field: "org_slug", code: "unique", message }]);
      }
      if (!admin) return orgs.create(slug, name ?? slug, actor);
      // The user deleted since the caller looked it up (another request or node): the answer
      // the caller gives when it finds no such user.
      return whileUserExists(orgs.createWithAdmin(slug, name ?? slug, admin, actor), () =>
        invalidField("admin", `There is no user "${admin.username}".`, "not_found"),
      );
    },
    async addMember(orgId: number, username: string, role: string, actor: Actor) {
      const r = checkRole(role);
      const user = await users.getByUsername(username);
      const gone = () => invalid("No such user.", [{ field: "username", ...noSuchUser(username) }]);
      if (!user) throw gone();
      await whileUserExists(orgs.addMember(orgId, user.id, r, actor), gone);
      // Read after the commit: another request (or node) may have removed the member or deleted
      // the user in between. Then the answer is what that request left, not a 500.
      const m = await orgs.member(orgId, username);
      if (!m) throw conflict("The member was removed by another request meanwhile.");
      return m;
    },
    /**
     * `refusal`: what the request's If-Match / If-None-Match call for (src/http/preconditions.ts),
     * thrown only once the 404 and the last admin's 409 are ruled out (RFC 9110 §13.2.1).
     */
    async setRole(orgId: number, username: string, role: string, actor: Actor, refusal?: AppError | null) {
      const r = checkRole(role);
      const m = await orgs.member(orgId, username);
      if (!m) throw notFound("Member");
      const done = await orgs.changeMember(orgId, m.user_id, r, actor, !!refusal);
      if (done === "last_admin")
        throw conflict(
          "The last admin of an organization cannot be demoted; make another member admin first.",
        );
      if (done === "refused" && refusal) throw refusal;
      const now = done === "ok" ? await orgs.member(orgId, username) : null;
      if (!now) throw notFound("Member");
      return now;
    },
    /** `refusal`: as for setRole. */
    async removeMember(orgId: number, username: string, actor: Actor, refusal?: AppError | null) {
      const m = await orgs.member(orgId, username);
      if (!m) throw notFound("Member");
      const done = await orgs.changeMember(orgId, m.user_id, null, actor, !!refusal);
      if (done === "last_admin")
        throw conflict(
          "The last admin of an organization cannot be removed; make another member admin first.",
        );
      if (done === "not_member") throw notFound("Member");
      if (done === "refused" && refusal) throw refusal;
    },
  };
}
export type OrgService = ReturnType<typeof createOrgService>;
