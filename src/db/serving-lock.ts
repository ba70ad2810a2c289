// The advisory lock every server on PostgreSQL holds shared while it runs (src/db/schema-hold.ts)
// and a migration servers cannot run on must take exclusively (src/db/migrate.ts).
import type { SQL } from "bun";

/**
 * The lock's key (this one spells "ASSV"). Under 2^31 so that pg_locks shows it whole in `objid`
 * (`classid` holds a key's upper 32 bits). Advisory locks are per database.
 */
export const SERVING_LOCK = 0x41_53_53_56;

/** The servers holding the lock on the database `q` is connected to (itself included). */
export async function serversHolding(q: Pick<SQL, "unsafe">): Promise<number> {
  const [row] = (await q.unsafe(
    `SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND classid = 0 AND objid = ${SERVING_LOCK} AND objsubid = 1
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  )) as { n: number }[];
  return Number(row?.n ?? 0);
}
