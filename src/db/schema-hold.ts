// Several nodes share one PostgreSQL database, so no data-dir lock can tell a newer `assay` (CLI
// or node) that servers are running on the schema it is about to change. Every server holds a
// shared advisory lock on its database for as long as it runs, on a connection of its own; a
// migration that servers of the build before cannot run on (not additive) must take that lock
// exclusively, in its transaction, or is refused (src/db/migrate.ts). Servers of builds before this
// one hold nothing and are not seen: the guard protects upgrades from this release on.
import { SQL } from "bun";
import type { createLogger } from "../lib/log.ts";
import { assertRunnable } from "./migrate.ts";
import { SERVING_LOCK } from "./serving-lock.ts";
import { parseDatabaseUrl } from "./url.ts";
import { connectTimeoutOf } from "./url-query.ts";

export interface SchemaHold {
  /** Gives the lock up (the server stops). */
  stop(): Promise<void>;
}

/**
 * Takes the shared lock for a server that has migrated, then reads the schema's history again: a
 * migration it cannot run on may have committed between its own and the lock (it waited for that
 * migration's exclusive hold to end). A connection lost (PostgreSQL restarted, the session killed)
 * loses the lock; it is checked every `everyMs` and taken again on the new session. Needs a
 * session of its own: a pooler in transaction mode in front of PostgreSQL cannot keep one
 * (docs/scaling.md).
 */
export async function holdSchema(
  url: string,
  log: ReturnType<typeof createLogger>,
  opts: {
    everyMs?: number;
    /**
     * The lock was lost and, before it was taken again, a migration this build cannot run on
     * committed: the server must stop serving (src/server.ts stops it). Called once.
     */
    onTooNew?: (e: Error) => void;
  } = {},
): Promise<SchemaHold> {
  // A client of its own with one connection that never idles out: the pool's may be closed.
  const sql = new SQL({
    url,
    max: 1,
    idleTimeout: 0,
    connectionTimeout: connectTimeoutOf(parseDatabaseUrl(url)) ?? 10,
  });
  // Whether this session holds the lock: false on a new session (the client reconnected after
  // PostgreSQL restarted or the session was killed), whatever pid it got.
  const holding = async () =>
    Boolean(
      (
        (await sql.unsafe(
          `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'
           AND granted AND classid = 0 AND objid = ${SERVING_LOCK} AND objsubid = 1) AS held`,
        )) as { held: boolean }[]
      )[0]?.held,
    );
  // Taken, then the history read: once held, a too-new schema is reported but never taken twice.
  const take = async () => {
    // Idle by design: a role's idle_session_timeout (PostgreSQL 14+) would end the session, and
    // the lock with it, every few seconds. Not a setting before 14 (42704): nothing to undo.
    await sql.unsafe("SET idle_session_timeout = 0").catch((e) => {
      if ((e as { errno?: unknown })?.errno !== "42704") throw e;
    });
    await sql.unsafe(`SELECT pg_advisory_lock_shared(${SERVING_LOCK})`);
    await assertRunnable(sql);
  };
  try {
    await take();
  } catch (e) {
    // Given up before the close: a closed session's locks go a moment later, on the server's time.
    await sql.unsafe("SELECT pg_advisory_unlock_all()").catch(() => {});
    await sql.close({ timeout: 1 }).catch(() => {});
    throw e;
  }
  let checking = false;
  const timer = setInterval(async () => {
    if (checking) return;
    checking = true;
    try {
      if (!(await holding())) {
        log.warn("the schema hold's database session was lost; taking it again");
        await take();
      }
    } catch (e) {
      // Unreachable now: tried again next time. A schema this build cannot run on is an error.
      const name = (e as Error)?.name;
      if (name === "SchemaTooNew") {
        log.error("the schema was upgraded under this server; it stops serving", { error: String(e) });
        clearInterval(timer);
        opts.onTooNew?.(e as Error);
      }
    } finally {
      checking = false;
    }
  }, opts.everyMs ?? 10_000);
  timer.unref?.();
  return {
    async stop() {
      clearInterval(timer);
      // Given up explicitly: a closed connection's session may linger a moment on the server.
      await sql.unsafe(`SELECT pg_advisory_unlock_all()`).catch(() => {});
      await sql.close({ timeout: 2 }).catch(() => {});
    },
  };
}
