// SQL for organizations and memberships: programs run by either database (src/db/program.ts).
import { audit } from "../audit/append.ts";
import type { Actor } from "../audit/types.ts";
import { GenerationCache, deepFreeze } from "../db/generation.ts";
import { type Db, countedPage, type Program, all, count, forUpdate, get, run } from "../db/program.ts";
import { now, uniqueOr } from "../db/util.ts";

export const ROLES = ["viewer", "executor", "author", "admin"] as const;
export type Role = (typeof ROLES)[number];
export const ORG_STATUSES = ["active", "suspended"] as const;
export type OrgStatus = (typeof ORG_STATUSES)[number];
export const roleRank = (r: Role) => ROLES.indexOf(r);

export interface Org {
  id: number;
  slug: string;
  name: string;
  status: OrgStatus;
  created_at: string;
  deleted_at: string | null;
}
export interface OrgAccess extends Org {
  role: Role | null;
}
export interface Member {
  user_id: number;
  username: string;
  name: string;
  role: Role;
  created_at: string;
}

/** (user, org) access answers kept in memory (src/db/generation.ts: exact across processes). */
const ACCESS_CACHE_SIZE = 4096;

/** Inserts an org (409 when the slug is taken); also used inside larger transactions (init). */
export function* insertOrg(slug: string, name: string): Program<Org> {
  const row = yield* uniqueOr(
    get<Org>("INSERT INTO orgs (slug, name, created_at) VALUES (?, ?, ?) RETURNING *", slug, name, now()),
    `The organization slug "${slug}" is taken.`,
    "org_slug",
  );
  return row!;
}

export function* insertMember(orgId: number, userId: number, role: Role): Program<void> {
  yield* uniqueOr(
    run(
      "INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?, ?, ?, ?)",
      orgId,
      userId,
      role,
      now(),
    ),
    "The user is already a member of this organization.",
    "username",
  );
}

/** The org fields the audit log records. */
const orgRecord = (o: Org) => ({ slug: o.slug, name: o.name, status: o.status, deleted_at: o.deleted_at });

/**
 * An org created, with its first member (an Admin) when given, logged; run in one transaction
 * (also by the first run).
 */
export function* createOrg(
  slug: string,
  name: string,
  actor: Actor,
  admin?: { id: number; username: string },
) {
  const org = yield* insertOrg(slug, name);
  yield* audit(actor, {
    action: "org.create",
    org_id: org.id,
    target_type: "org",
    target_id: org.id,
    target_name: org.slug,
    after: orgRecord(org),
  });
  if (admin) yield* addMember(org.id, admin.id, "admin", actor);
  return org;
}

function* addMember(orgId: number, userId: number, role: Role, actor: Actor): Program<void> {
  yield* insertMember(orgId, userId, role);
  const u = yield* get<{ username: string }>("SELECT username FROM users WHERE id = ?", userId);
  yield* audit(actor, {
    action: "member.add",
    org_id: orgId,
    target_type: "member",
    target_id: userId,
    target_name: u?.username ?? null,
    after: { role },
  });
}

const MEMBER_SEL =
  "SELECT m.user_id, u.username, u.name, m.role, m.created_at FROM memberships m JOIN users u ON u.id = m.user_id";

export function createOrgStore(db: Db) {
  // Only known orgs are cached (a member or not): random slugs cannot fill the cache.
  const accessCache = new GenerationCache<string, OrgAccess>(db, ACCESS_CACHE_SIZE);
  const lock = forUpdate(db.dialect);
  return {
    async create(slug: string, name: string, actor: Actor): Promise<Org> {
      return db.tx(() => createOrg(slug, name, actor));
    },
    /** An org and its first Admin, in one transaction. */
    async createWithAdmin(
      slug: string,
      name: string,
      admin: { id: number; username: string },
      actor: Actor,
    ): Promise<Org> {
      return db.tx(() => createOrg(slug, name, actor, admin));
    },
    async getBySlug(slug: string): Promise<Org | null> {
      return db.exec(get<Org>("SELECT * FROM orgs WHERE slug = ?", slug));
    },
    /**
     * The org by slug with the user's role in it (null role: not a member). Hot path: cached,
     * the answer is shared and frozen. `generation`: the one the request's authentication read.
     */
    async access(userId: number, slug: string, generation?: number): Promise<OrgAccess | null> {
      return accessCache.get(
        `${userId}:${slug}`,
        function* () {
          // CAST keeps the plan: a bare ? in a join is re-planned on every execution by SQLite
          // (30.7 → 4.6 µs).
          const r = yield* get<OrgAccess>(
            "SELECT o.*, m.role FROM orgs o LEFT JOIN memberships m ON m.org_id = o.id AND m.user_id = CAST(? AS INTEGER) WHERE o.slug = CAST(? AS TEXT)",
            userId,
            slug,
          );
          return r ? deepFreeze(r) : null;
        },
        generation,
      );
    },
    async list(opts: {
      includeDeleted: boolean;
      limit: number;
      offset: number;
    }): Promise<{ count: number; items: Org[] }> {
      const where = opts.includeDeleted ? "" : "WHERE deleted_at IS NULL";
      const { count: n, rows } = await countedPage<Org>(db, {
        count: `SELECT count(*) AS n FROM orgs ${where}`,
        countParams: [],
        page: `SELECT * FROM orgs ${where} ORDER BY slug LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
        pageParams: [opts.limit, opts.offset],
        order: "p.slug",
        key: "id",
      });
      return { count: n, items: rows };
    },
    /** Orgs where the user is a member (deleted orgs hidden), with the role. */
    async listForUser(
      userId: number,
      limit = 1000,
      offset = 0,
    ): Promise<{ count: number; items: OrgAccess[] }> {
      const base =
        "FROM orgs o JOIN memberships m ON m.org_id = o.id WHERE m.user_id = CAST(? AS INTEGER) AND o.deleted_at IS NULL";
      const { count: n, rows } = await countedPage<OrgAccess>(db, {
        count: `SELECT count(*) AS n ${base}`,
        countParams: [userId],
        page: `SELECT o.*, m.role ${base} ORDER BY o.slug LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
        pageParams: [userId, limit, offset],
        order: "p.slug",
        key: "id",
      });
      return { count: n, items: rows };
    },
    /**
     * `action`: what the audit log calls it (org.update, org.delete, org.suspend, org.restore).
     * `refuse`: throws to refuse the change given the org as it is now (a suspension of an org
     * deleted meanwhile), in the transaction that writes it.
     */
    async update(
      id: number,
      patch: { name?: string; status?: Org["status"]; deleted_at?: string | null },
      actor: Actor,
      action = "org.update",
      refuse?: (now: Org) => void,
    ): Promise<Org> {
      const keepDeleted = patch.deleted_at === undefined ? 1 : 0;
      return db.tx(function* () {
        // Locked (PostgreSQL): a change made at the same time (another node) waits, and then
        // logs what this one left as its `before`, not the row both read.
        const before = yield* get<Org>(`SELECT * FROM orgs WHERE id = ?${lock}`, id);
        if (before && refuse) refuse(before);
        // A deletion keeps the time of the first: deleting a deleted org changes nothing.
        const after = (yield* get<Org>(
          "UPDATE orgs SET name = coalesce(?, name), status = coalesce(?, status), deleted_at = CASE WHEN CAST(? AS INTEGER) = 1 THEN deleted_at WHEN CAST(? AS TEXT) IS NULL THEN NULL ELSE coalesce(deleted_at, CAST(? AS TEXT)) END WHERE id = ? RETURNING *",
          patch.name ?? null,
          patch.status ?? null,
          keepDeleted,
          patch.deleted_at ?? null,
          patch.deleted_at ?? null,
          id,
        ))!;
        yield* audit(actor, {
          action,
          org_id: id,
          target_type: "org",
          target_id: id,
          target_name: after.slug,
          before: before ? orgRecord(before) : null,
          // A deletion records the whole org as it was (docs/audit.md: a delete records the whole
          // record; until 2026-11-29 only `deleted_at` changed, so the entry named no org name):
          // before is the org, after its deletion time. Deleting a deleted org changes nothing.
          after:
            action === "org.delete" && before?.deleted_at === null
              ? { deleted_at: after.deleted_at }
              : orgRecord(after),
        });
        return after;
      });
    },
    async members(orgId: number, limit: number, offset: number): Promise<{ count: number; items: Member[] }> {
      const { count: n, rows } = await countedPage<Member>(db, {
        count: "SELECT count(*) AS n FROM memberships WHERE org_id = CAST(? AS INTEGER)",
        countParams: [orgId],
        page: `${MEMBER_SEL} WHERE m.org_id = CAST(? AS INTEGER) ORDER BY u.username LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
        pageParams: [orgId, limit, offset],
        order: "p.username",
        key: "user_id",
      });
      return { count: n, items: rows };
    },
    async member(orgId: number, username: string): Promise<Member | null> {
      return db.exec(
        get<Member>(
          `${MEMBER_SEL} WHERE m.org_id = CAST(? AS INTEGER) AND u.username = CAST(? AS TEXT)`,
          orgId,
          username,
        ),
      );
    },
    async addMember(orgId: number, userId: number, role: Role, actor: Actor): Promise<void> {
      await db.tx(() => addMember(orgId, userId, role, actor));
    },
    /**
     * Changes a member's role (null = remove) unless that would leave the org without an admin.
     * Check and change run in one transaction, the org's admin rows locked, so two concurrent
     * demotions cannot both pass. `refuse`: the request's If-Match / If-None-Match failed, so it
     * changes nothing, but the 409 and 404 come first (RFC 9110 §13.2.1): judged here, after them,
     * in the same transaction, rather than before it against a state that may change meanwhile.
     */
    async changeMember(
      orgId: number,
      userId: number,
      role: Role | null,
      actor: Actor,
      refuse = false,
    ): Promise<"ok" | "last_admin" | "not_member" | "refused"> {
      return db.tx(
        function* () {
          const admins = yield* all<{ user_id: number }>(
            `SELECT user_id FROM memberships WHERE org_id = ? AND role = 'admin'${lock}`,
            orgId,
          );
          const isAdmin = admins.some((a) => a.user_id === userId);
          if (isAdmin && role !== "admin" && admins.length <= 1) return "last_admin" as const;
          const was = yield* get<{ role: Role; username: string }>(
            `${MEMBER_SEL} WHERE m.org_id = ? AND m.user_id = ?`,
            orgId,
            userId,
          );
          // Removed since the caller looked it up (another request, the CLI, another node): a 404,
          // not an entry for a change that did not happen.
          if (!was) return "not_member" as const;
          if (refuse) return "refused" as const;
          if (role)
            yield* run(
              "UPDATE memberships SET role = ? WHERE org_id = ? AND user_id = ?",
              role,
              orgId,
              userId,
            );
          else yield* run("DELETE FROM memberships WHERE org_id = ? AND user_id = ?", orgId, userId);
          yield* audit(actor, {
            action: role ? "member.update" : "member.remove",
            org_id: orgId,
            target_type: "member",
            target_id: userId,
            target_name: was.username,
            before: { role: was.role },
            after: role ? { role } : null,
          });
          return "ok" as const;
        },
        { immediate: true },
      );
    },
    async countAdmins(orgId: number): Promise<number> {
      return db.exec(
        count("SELECT count(*) AS n FROM memberships WHERE org_id = ? AND role = 'admin'", orgId),
      );
    },
  };
}
export type OrgStore = ReturnType<typeof createOrgStore>;
