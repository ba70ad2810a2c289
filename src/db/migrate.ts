// Migrations are SQL files embedded in the binary (imported as text) and tracked with
// PRAGMA user_version: migration N runs once, inside a transaction, when user_version < N.
import type { Database } from "bun:sqlite";
import m0001 from "./migrations/0001_init.sql" with { type: "text" };
import m0002 from "./migrations/0002_webhooks.sql" with { type: "text" };
import m0003 from "./migrations/0003_run_list_indexes.sql" with { type: "text" };
import m0004 from "./migrations/0004_org_schemas.sql" with { type: "text" };
import m0005 from "./migrations/0005_cache_generation.sql" with { type: "text" };
import m0006 from "./migrations/0006_run_indexes_by_status.sql" with { type: "text" };
import m0007 from "./migrations/0007_run_findings.sql" with { type: "text" };

export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  { version: 1, name: "init", sql: m0001 },
  { version: 2, name: "webhooks", sql: m0002 },
  { version: 3, name: "run_list_indexes", sql: m0003 },
  { version: 4, name: "org_schemas", sql: m0004 },
  { version: 5, name: "cache_generation", sql: m0005 },
  { version: 6, name: "run_indexes_by_status", sql: m0006 },
  { version: 7, name: "run_findings", sql: m0007 },
];

export function migrate(db: Database): number {
  const current = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  const latest = MIGRATIONS.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new Error(
      `The data directory was written by a newer Assay (schema ${current}, this build knows ${latest}).`,
    );
  }
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.exec(`PRAGMA user_version = ${m.version}`);
    })();
  }
  return latest;
}
