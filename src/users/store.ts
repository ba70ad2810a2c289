// SQL for users: programs run by either database (src/db/program.ts).
import { audit } from "../audit/append.ts";
import type { Actor } from "../audit/types.ts";
import { GenerationCache, deepFreeze } from "../db/generation.ts";
import { type Db, countedPage, count, get, all, run, forUpdate, type Program } from "../db/program.ts";
import { bool, now, uniqueOr } from "../db/util.ts";
import { conflict } from "../errors.ts";

export interface User {
  id: number;
  username: string;
  name: string;
  email: string;
  is_admin: boolean;
  created_at: string;
}
interface UserRow extends Omit<User, "is_admin"> {
  is_admin: number;
  password_hash: string | null;
}

/** Users kept in memory by id (src/db/generation.ts: exact across processes). */
const USER_CACHE_SIZE = 1024;

const toUser = (r: UserRow): User => ({
  id: r.id,
  username: r.username,
  name: r.name,
  email: r.email,
  is_admin: bool(r.is_admin),
  created_at: r.created_at,
});

export interface NewUser {
  username: string;
  name?: string;
  email?: string;
  is_admin?: boolean;
  password_hash?: string | null;
}

/** Inserts a user (409 when the username is taken); also used inside larger transactions (init). */
export function* insertUser(u: NewUser): Program<User> {
  // Names differing only in case are one name to people (member lists, the audit log, the sign-in
  // limiter's key), though sign-in matches exactly: the second is refused as taken. Usernames are
  // ASCII (USERNAME_RE), so lower() is the same on both engines. Checked, not indexed: an index
  // on lower(username) would stop an existing installation that holds two such names from
  // starting. So on PostgreSQL the transaction must lock the generation row before this check
  // (createUserStore's create, the setup store): concurrent creations then check in turn.
  const twin = yield* get<{ username: string }>(
    "SELECT username FROM users WHERE lower(username) = lower(?)",
    u.username,
  );
  if (twin) {
    const as = twin.username === u.username ? "" : ` (as "${twin.username}")`;
    const message = `The username "${u.username}" is taken${as}.`;
    throw conflict(message, [{ field: "username", code: "unique", message }]);
  }
  const row = yield* uniqueOr(
    get<UserRow>(
      "INSERT INTO users (username, name, email, password_hash, is_admin, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *",
      u.username,
      u.name ?? "",
      u.email ?? "",
      u.password_hash ?? null,
      u.is_admin ? 1 : 0,
      now(),
    ),
    `The username "${u.username}" is taken.`,
    "username",
  );
  return toUser(row!);
}

const byId = (id: number) => get<UserRow>("SELECT * FROM users WHERE id = ?", id);
/** The user fields the audit log records (never the password hash). */
const userRecord = (u: User) => ({
  username: u.username,
  name: u.name,
  email: u.email,
  is_admin: u.is_admin,
});
const userTarget = (u: User) => ({
  target_type: "user",
  target_id: u.id,
  target_name: u.username,
  org_id: null,
});
/** A user inserted and logged; also used inside larger transactions (the first run). */
export function* createUserLogged(u: NewUser, actor: Actor): Program<User> {
  const user = yield* insertUser(u);
  yield* audit(actor, {
    action: "user.create",
    ...userTarget(user),
    after: { ...userRecord(user), has_password: u.password_hash != null },
  });
  return user;
}

/**
 * Replaces a hash made before normalization (of the raw string) with the NFKC form's, unless it
 * changed meanwhile (a password set at the same time wins); true when it was replaced.
 */
export function* rehashPassword(id: number, stored: string, hash: string): Program<boolean> {
  return (
    (yield* run("UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?", hash, id, stored)) >
    0
  );
}

const byName = (username: string) => get<UserRow>("SELECT * FROM users WHERE username = ?", username);

export function createUserStore(db: Db) {
  const cache = new GenerationCache<number, User>(db, USER_CACHE_SIZE);
  const lock = forUpdate(db.dialect);
  return {
    async create(u: NewUser, actor: Actor): Promise<User> {
      return db.tx(function* () {
        // The case-insensitive twin check reads, then inserts: on PostgreSQL two creations of
        // "Ann" and "ann" (two nodes, or two connections of one) would each see no twin. The
        // generation row, which the insert's trigger locks anyway, is locked first, so the
        // second waits and then sees the first (SQLite's one writer runs them in turn).
        if (lock) yield* get(`SELECT value FROM cache_generation${lock}`);
        return yield* createUserLogged(u, actor);
      });
    },
    /** Hot path (every authenticated request): cached; the user is shared and frozen. */
    async get(id: number): Promise<User | null> {
      return cache.get(id, function* () {
        const r = yield* byId(id);
        return r ? deepFreeze(toUser(r)) : null;
      });
    },
    async getByUsername(username: string): Promise<User | null> {
      const r = await db.exec(byName(username));
      return r ? toUser(r) : null;
    },
    async passwordHash(username: string): Promise<{ user: User; hash: string | null } | null> {
      const r = await db.exec(byName(username));
      return r ? { user: toUser(r), hash: r.password_hash } : null;
    },
    /**
     * `action`: user.set_password (an administrator), user.password_change (the user, who then
     * has `also` end their other sessions in the same transaction). `expected`: the hash the
     * user's current password was checked against (a change by the user): nothing is written, and
     * false returned, when the user's hash is another one now (changed meanwhile by another
     * request or node, or reset by an administrator), so the caller checks the current password
     * again.
     */
    async setPassword(
      id: number,
      hash: string,
      actor: Actor,
      action = "user.set_password",
      also?: () => Program<unknown>,
      expected?: string,
    ): Promise<boolean> {
      return db.tx(function* () {
        const r = yield* byId(id);
        if (!r) return true;
        // Judged in the UPDATE itself: on PostgreSQL it waits for a change in progress and then
        // reads the hash that change wrote.
        const changed =
          expected === undefined
            ? yield* run("UPDATE users SET password_hash = ? WHERE id = ?", hash, id)
            : yield* run(
                "UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?",
                hash,
                id,
                expected,
              );
        if (expected !== undefined && changed === 0) return false;
        if (also) yield* also();
        yield* audit(actor, { action, ...userTarget(toUser(r)), after: { password_set: true } });
        return true;
      });
    },
    async update(
      id: number,
      patch: { name?: string; email?: string; is_admin?: boolean },
      actor: Actor,
    ): Promise<User | null> {
      return db.tx(function* () {
        const before = yield* byId(id);
        const r = yield* get<UserRow>(
          "UPDATE users SET name = coalesce(?, name), email = coalesce(?, email), is_admin = coalesce(CAST(? AS INTEGER), is_admin) WHERE id = ? RETURNING *",
          patch.name ?? null,
          patch.email ?? null,
          patch.is_admin === undefined ? null : patch.is_admin ? 1 : 0,
          id,
        );
        if (!before || !r) return null;
        const after = toUser(r);
        yield* audit(actor, {
          action: "user.update",
          ...userTarget(after),
          before: userRecord(toUser(before)),
          after: userRecord(after),
        });
        return after;
      });
    },
    async list(limit: number, offset: number): Promise<{ count: number; items: User[] }> {
      const { count: n, rows } = await countedPage<UserRow>(db, {
        count: "SELECT count(*) AS n FROM users",
        countParams: [],
        page: "SELECT * FROM users ORDER BY id LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)",
        pageParams: [limit, offset],
        order: "p.id",
        key: "id",
      });
      return { count: n, items: rows.map(toUser) };
    },
    /**
     * Deleting a user deletes their tokens, sessions and memberships (ON DELETE CASCADE). Each
     * membership removed gets its `member.remove` entry in its org's log, so an org's log says
     * who left it (and that it may have no Admin now), not only the instance's. `refuse`: the
     * request's If-Match / If-None-Match failed: nothing is deleted, but the 404 and the last
     * admin's 409 come first (RFC 9110 §13.2.1), judged in this transaction.
     */
    async delete(id: number, actor: Actor, refuse = false): Promise<boolean | "last_admin" | "refused"> {
      return db.tx(
        function* () {
          const r = yield* byId(id);
          if (!r) return false;
          // Someone must be left to administer the instance. Checked in the transaction that
          // deletes, the admins' rows locked (PostgreSQL; SQLite's write transaction holds the
          // database), so two deletions at once cannot both pass: checked before it, two CLI or
          // API deletions of the last two admins both did.
          if (r.is_admin) {
            const admins = yield* all<{ id: number }>(`SELECT id FROM users WHERE is_admin = 1${lock}`);
            if (admins.length <= 1) return "last_admin" as const;
          }
          if (refuse) return "refused" as const;
          const memberships = yield* all<{ org_id: number; role: string }>(
            "SELECT org_id, role FROM memberships WHERE user_id = ? ORDER BY org_id",
            id,
          );
          if ((yield* run("DELETE FROM users WHERE id = ?", id)) === 0) return false;
          const u = toUser(r);
          yield* audit(actor, { action: "user.delete", ...userTarget(u), before: userRecord(u) });
          for (const m of memberships)
            yield* audit(actor, {
              action: "member.remove",
              org_id: Number(m.org_id),
              target_type: "member",
              target_id: id,
              target_name: u.username,
              before: { role: m.role },
              after: null,
              context: { reason: "user.delete" },
            });
          return true;
        },
        { immediate: true },
      );
    },
    async count(): Promise<number> {
      return db.exec(count("SELECT count(*) AS n FROM users"));
    },
  };
}
export type UserStore = ReturnType<typeof createUserStore>;
