// SQL for users. Plain async functions over one connection; a PostgreSQL store would implement
// the same UserStore interface.
import type { Database } from "bun:sqlite";
import { GenerationCache, deepFreeze, generationOf } from "../db/generation.ts";
import { bool, now, uniqueOr } from "../db/util.ts";

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

export function createUserStore(db: Database) {
  const byId = db.prepare<UserRow, [number]>("SELECT * FROM users WHERE id = ?");
  const byName = db.prepare<UserRow, [string]>("SELECT * FROM users WHERE username = ?");
  const cache = new GenerationCache<number, User>(generationOf(db), USER_CACHE_SIZE);
  return {
    async create(u: {
      username: string;
      name?: string;
      email?: string;
      is_admin?: boolean;
      password_hash?: string | null;
    }): Promise<User> {
      const row = uniqueOr(
        () =>
          db
            .query<UserRow, [string, string, string, string | null, number, string]>(
              "INSERT INTO users (username, name, email, password_hash, is_admin, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *",
            )
            .get(
              u.username,
              u.name ?? "",
              u.email ?? "",
              u.password_hash ?? null,
              u.is_admin ? 1 : 0,
              now(),
            )!,
        `The username "${u.username}" is taken.`,
        "username",
      );
      return toUser(row);
    },
    /** Hot path (every authenticated request): cached; the user is shared and frozen. */
    async get(id: number): Promise<User | null> {
      return cache.get(id, () => {
        const r = byId.get(id);
        return r ? deepFreeze(toUser(r)) : null;
      });
    },
    async getByUsername(username: string): Promise<User | null> {
      const r = byName.get(username);
      return r ? toUser(r) : null;
    },
    async passwordHash(username: string): Promise<{ user: User; hash: string | null } | null> {
      const r = byName.get(username);
      return r ? { user: toUser(r), hash: r.password_hash } : null;
    },
    async setPassword(id: number, hash: string): Promise<void> {
      db.query("UPDATE users SET password_hash = ? WHERE id = ?").run(hash, id);
    },
    async update(
      id: number,
      patch: { name?: string; email?: string; is_admin?: boolean },
    ): Promise<User | null> {
      const cur = byId.get(id);
      if (!cur) return null;
      db.query("UPDATE users SET name = ?, email = ?, is_admin = ? WHERE id = ?").run(
        patch.name ?? cur.name,
        patch.email ?? cur.email,
        patch.is_admin === undefined ? cur.is_admin : patch.is_admin ? 1 : 0,
        id,
      );
      return toUser(byId.get(id)!);
    },
    async list(limit: number, offset: number): Promise<{ count: number; items: User[] }> {
      const count = (db.query("SELECT count(*) AS n FROM users").get() as { n: number }).n;
      const items = db
        .query<UserRow, [number, number]>(
          "SELECT * FROM users ORDER BY id LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)",
        )
        .all(limit, offset);
      return { count, items: items.map(toUser) };
    },
    /** Deleting a user deletes their tokens, sessions and memberships (ON DELETE CASCADE). */
    async delete(id: number): Promise<boolean> {
      return db.query("DELETE FROM users WHERE id = ?").run(id).changes > 0;
    },
    async countAdmins(): Promise<number> {
      return (db.query("SELECT count(*) AS n FROM users WHERE is_admin = 1").get() as { n: number }).n;
    },
    async count(): Promise<number> {
      return (db.query("SELECT count(*) AS n FROM users").get() as { n: number }).n;
    },
  };
}
export type UserStore = ReturnType<typeof createUserStore>;
