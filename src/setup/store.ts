// SQL of the first run: the first instance admin, the first org with that admin as Admin and
// (for the CLI) an API token, in ONE transaction that also checks the instance has no user yet.
// A failed first run leaves nothing behind, and two setup forms sent at once cannot both win.
import type { Database } from "bun:sqlite";
import { now, uniqueOr } from "../db/util.ts";

export interface FirstRun {
  org: { slug: string; name: string };
  admin: { username: string; password_hash: string | null };
  /** The CLI's token (its secret stays with the caller); the web form signs in instead. */
  token?: { name: string; prefix: string; digest: Uint8Array };
}

export function createSetupStore(db: Database) {
  return {
    async userCount(): Promise<number> {
      return (db.query("SELECT count(*) AS n FROM users").get() as { n: number }).n;
    },
    /** The deleted_at of the org holding `slug` (null: live), or undefined when it is free. */
    async slugHolder(slug: string): Promise<{ deleted_at: string | null } | undefined> {
      return (
        db
          .query<{ deleted_at: string | null }, [string]>("SELECT deleted_at FROM orgs WHERE slug = ?")
          .get(slug) ?? undefined
      );
    },
    /** Null when the instance already has a user (nothing written). */
    async create(f: FirstRun): Promise<{ userId: number; orgId: number } | null> {
      return db.transaction(() => {
        if ((db.query("SELECT count(*) AS n FROM users").get() as { n: number }).n > 0) return null;
        const ts = now();
        const org = uniqueOr(
          () =>
            db
              .query<{ id: number }, [string, string, string]>(
                "INSERT INTO orgs (slug, name, created_at) VALUES (?, ?, ?) RETURNING id",
              )
              .get(f.org.slug, f.org.name, ts)!,
          `The organization slug "${f.org.slug}" is taken.`,
          "org_slug",
        );
        const user = db
          .query<{ id: number }, [string, string | null, string]>(
            "INSERT INTO users (username, name, email, password_hash, is_admin, created_at) VALUES (?, '', '', ?, 1, ?) RETURNING id",
          )
          .get(f.admin.username, f.admin.password_hash, ts)!;
        db.query("INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?, ?, 'admin', ?)").run(
          org.id,
          user.id,
          ts,
        );
        if (f.token)
          db.query(
            "INSERT INTO api_tokens (user_id, name, prefix, digest, created_at, expires_at) VALUES (?, ?, ?, ?, ?, NULL)",
          ).run(user.id, f.token.name, f.token.prefix, f.token.digest, ts);
        return { userId: user.id, orgId: org.id };
      })();
    },
  };
}
export type SetupStore = ReturnType<typeof createSetupStore>;
