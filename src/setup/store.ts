// The first run's writes: the first instance admin, the first org with that admin as Admin and
// (for the CLI) an API token, in ONE transaction that also checks the instance has no user yet.
// A failed first run leaves nothing behind, and two setup forms sent at once cannot both win.
// A program run by either database (src/db/program.ts), from the stores' own inserts; each write
// is logged in the same transaction (the CLI's account, or the setup form's client address).
import type { Actor } from "../audit/types.ts";
import { type Db, count, forUpdate, get } from "../db/program.ts";
import { createOrg } from "../orgs/store.ts";
import { createTokenLogged } from "../tokens/store.ts";
import { createUserLogged } from "../users/store.ts";

export interface FirstRun {
  org: { slug: string; name: string };
  admin: { username: string; password_hash: string | null };
  /** The CLI's token (its secret stays with the caller); the web form signs in instead. */
  token?: { name: string; prefix: string; digest: Uint8Array };
}

const users = () => count("SELECT count(*) AS n FROM users");

export function createSetupStore(db: Db) {
  // Two first runs at once must not both see "no user": on PostgreSQL the one-row generation
  // table is locked first (absent rows cannot be), on SQLite the write lock is (immediate).
  const serialise = `SELECT value FROM cache_generation${forUpdate(db.dialect)}`;
  return {
    async userCount(): Promise<number> {
      return db.exec(users());
    },
    /** The deleted_at of the org holding `slug` (null: live), or undefined when it is free. */
    async slugHolder(slug: string): Promise<{ deleted_at: string | null } | undefined> {
      return (
        (await db.exec(
          get<{ deleted_at: string | null }>("SELECT deleted_at FROM orgs WHERE slug = ?", slug),
        )) ?? undefined
      );
    },
    /** Null when the instance already has a user (nothing written). */
    async create(f: FirstRun, actor: Actor): Promise<{ userId: number; orgId: number } | null> {
      return db.tx(
        function* () {
          yield* get(serialise);
          if ((yield* users()) > 0) return null;
          const user = yield* createUserLogged(
            { username: f.admin.username, password_hash: f.admin.password_hash, is_admin: true },
            actor,
          );
          const org = yield* createOrg(f.org.slug, f.org.name, actor, user);
          if (f.token) yield* createTokenLogged({ user_id: user.id, ...f.token, expires_at: null }, actor);
          return { userId: user.id, orgId: org.id };
        },
        // The user count is checked, then written: the write lock first (SQLite BEGIN IMMEDIATE).
        { immediate: true },
      );
    },
  };
}
export type SetupStore = ReturnType<typeof createSetupStore>;
