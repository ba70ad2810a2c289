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

export interface SchemaHold {
  /** Gives the lock up (the server stops). */
  stop(): Promise<void>;
}

/**
 * Takes the shared lock for a server that has migrated, then reads the schema's history again: a
 * migration it cannot run on may have committed between its own and the lock (it waited for that
 * migration's exclusive hold to end). A connection lost (PostgreSQL restarted, the session killed)
 * loses the lock; it is checked every `everyMs` and taken again on the new session.
 */
export async function holdSchema(
  url: string,
  log: ReturnType<typeof createLogger>,
  opts: { everyMs?: number } = {},
): Promise<SchemaHold> {
  // A client of its own with one connection that never idles out: the pool's may be closed.
  const sql = new SQL({ url, max: 1, idleTimeout: 0, connectionTimeout: 10 });
  const take = async (): Promise<number> => {
    await sql.unsafe(`SELECT pg_advisory_lock_shared(${SERVING_LOCK})`);
    await assertRunnable(sql);
    const [row] = (await sql.unsafe("SELECT pg_backend_pid() AS pid")) as { pid: number }[];
    return Number(row?.pid);
  };
  let pid: number;
  try {
    pid = await take();
  } catch (e) {
    await sql.close({ timeout: 1 }).catch(() => {});
    throw e;
  }
  let checking = false;
  const timer = setInterval(async () => {
    if (checking) return;
    checking = true;
    try {
      const [row] = (await sql.unsafe("SELECT pg_backend_pid() AS pid")) as { pid: number }[];
      // The same session still holds the lock; a new one (the client reconnected) holds nothing.
      if (Number(row?.pid) !== pid) {
        pid = await take();
        log.warn("database session of the schema hold was lost; taken again");
      }
    } catch (e) {
      // Unreachable now: tried again next time. A schema this build cannot run on is an error.
      const name = (e as Error)?.name;
      if (name === "SchemaTooNew")
        log.error("the schema was upgraded under this server", { error: String(e) });
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
