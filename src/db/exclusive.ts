// Background work that every node runs on its own timer (the retention sweep, pruning the
// delivery log, rate-limit state) must not run twice at once. On PostgreSQL a session advisory
// lock decides: the node that gets it does the work, the others skip this round. SQLite has one
// server process: the work just runs.
import type { AnyDb } from "./open.ts";

/** Stable lock keys (any 64-bit numbers; these spell the job). */
export const JOBS = {
  retention: 0x41_53_52_45_54_4e, // "ASRETN"
  webhookPrune: 0x41_53_57_48_50_52, // "ASWHPR"
  rateLimitGc: 0x41_53_52_4c_47_43, // "ASRLGC"
  auditRetention: 0x41_53_41_55_44_54, // "ASAUDT"
} as const;

/** Runs `fn` unless another node runs the same job right now; returns whether it ran. */
export async function runExclusive(db: AnyDb, job: number, fn: () => Promise<unknown>): Promise<boolean> {
  if (db.dialect !== "postgres") {
    await fn();
    return true;
  }
  const conn = await db.sql.reserve();
  try {
    const [row] = (await conn.unsafe(`SELECT pg_try_advisory_lock(${job}) AS got`)) as { got: boolean }[];
    if (!row?.got) return false;
    try {
      await fn();
      return true;
    } finally {
      await conn.unsafe(`SELECT pg_advisory_unlock(${job})`);
    }
  } finally {
    conn.release();
  }
}
