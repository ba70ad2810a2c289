// Several nodes share one PostgreSQL database, so a newer `assay` (CLI or node) cannot see their
// data-dir locks: every server holds a shared advisory lock while it runs (src/db/schema-hold.ts),
// and a migration servers of the build before cannot run on (not additive, such as 19) is applied
// only when none holds it. Otherwise it is refused, saying what to do, and nothing changes.
// PostgreSQL only (the data dir's lock does this on SQLite: test/cli-upgrade-guard.test.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { testConfig } from "../src/config.ts";
import { LATEST, MIGRATIONS, migratePostgres } from "../src/db/migrate.ts";
import { createPgDb } from "../src/db/postgres.ts";
import { holdSchema } from "../src/db/schema-hold.ts";
import { SERVING_LOCK, serversHolding } from "../src/db/serving-lock.ts";
import { createLogger } from "../src/lib/log.ts";
import { startServer } from "../src/server.ts";
import { emptyPgDatabase, onPostgres } from "./helpers/backend.ts";
import { until } from "./helpers/fixtures.ts";
import { call } from "./helpers/server.ts";

const MAIN = `${import.meta.dir}/../src/main.ts`;
function assay(...args: string[]) {
  const { ASSAY_DATA_DIR: _d, ASSAY_DATABASE_URL: _u, ...env } = process.env;
  const p = Bun.spawnSync([process.execPath, MAIN, ...args], { env, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});
const silent = createLogger("silent");

/** A database as the build with migrations up to `upTo` left it, with one user, and a client on it. */
async function databaseAt(upTo: number): Promise<{ url: string; sql: SQL }> {
  const db = await emptyPgDatabase();
  const sql = new SQL({ url: db.url, max: 1 });
  cleanups.push(db.drop, () => sql.close());
  await sql.unsafe(
    "CREATE TABLE assay_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL, additive INTEGER NOT NULL DEFAULT 0)",
  );
  for (const m of MIGRATIONS.filter((x) => x.version <= upTo)) {
    await sql.unsafe(m.postgres);
    await sql.unsafe(
      "INSERT INTO assay_schema_migrations (version, name, applied_at, additive) VALUES ($1, $2, $3, $4)",
      [m.version, m.name, "2026-11-20T10:00:00.000Z", m.additive ? 1 : 0],
    );
  }
  await sql.unsafe("INSERT INTO users (username, created_at) VALUES ('root', '2026-11-20T10:00:00.000Z')");
  return { url: db.url, sql };
}
const versionOf = async (sql: SQL) =>
  Number(
    ((await sql.unsafe("SELECT max(version) AS v FROM assay_schema_migrations")) as { v: number }[])[0]?.v,
  );

const serverConfig = (url: string) =>
  testConfig({ port: 0, log_level: "silent", workers: 1, database_url: url });

describe.skipIf(!onPostgres)("servers hold their PostgreSQL schema", () => {
  test("a newer CLI refuses an upgrade running servers cannot run on, and performs it once they stop", async () => {
    const { url, sql } = await databaseAt(18);
    // Two servers of the build before, running: each holds the lock as a server of this build does.
    const a = await holdSchema(url, silent);
    const b = await holdSchema(url, silent);
    cleanups.push(a.stop, b.stop);
    expect(await serversHolding(sql)).toBe(2);
    const message = `assay users: 2 servers are running on this database, on a schema this build would upgrade in a way they cannot run on (19 step_configs, 21 pinned_documents). Stop every node, run "assay migrate" with this build, then start this build.\n`;
    expect(assay("users", "list", "--database-url", url)).toEqual({ code: 1, out: "", err: message });
    expect(assay("migrate", "--database-url", url)).toMatchObject({ code: 1 });
    expect(await versionOf(sql)).toBe(18);
    await a.stop();
    expect(assay("users", "list", "--database-url", url).err).toContain(
      "A server is running on this database",
    );
    expect(await versionOf(sql)).toBe(18);
    await b.stop();
    const r = assay("users", "list", "--database-url", url);
    expect(r).toMatchObject({ code: 0, err: "" });
    expect(r.out).toContain("root");
    expect(await versionOf(sql)).toBe(LATEST);
  });

  test("a newer node refuses to start under them the same way; additive migrations go ahead", async () => {
    const { url, sql } = await databaseAt(17);
    const old = await holdSchema(url, silent);
    cleanups.push(old.stop);
    await expect(startServer(serverConfig(url))).rejects.toThrow(
      'A server is running on this database, on a schema this build would upgrade in a way it cannot run on (19 step_configs, 21 pinned_documents). Stop every node, run "assay migrate" with this build, then start this build.',
    );
    // None of 18 to 21 applied: one transaction, all or nothing.
    expect(await versionOf(sql)).toBe(17);
    // Only additive migrations pending (18 and 20 here; 19 and 21 applied first, as a branch
    // might): applied under running servers, as a rolling upgrade needs.
    const other = await databaseAt(17);
    for (const m of MIGRATIONS.filter((x) => x.version === 19 || x.version === 21)) {
      await other.sql.unsafe(m.postgres);
      await other.sql.unsafe(
        "INSERT INTO assay_schema_migrations (version, name, applied_at, additive) VALUES ($1, $2, 'x', 0)",
        [m.version, m.name],
      );
    }
    const running = await holdSchema(other.url, silent);
    cleanups.push(running.stop);
    const db = createPgDb(other.url, { max: 1 });
    cleanups.push(() => db.close());
    await expect(migratePostgres(db)).resolves.toBe(LATEST);
    expect(await serversHolding(other.sql)).toBe(1);
    const applied = (await other.sql.unsafe(
      "SELECT version FROM assay_schema_migrations WHERE version = 18",
    )) as unknown[];
    expect(applied.length).toBe(1);
  });

  test("a server holds the lock from its start to its stop, and nodes starting together all start", async () => {
    const db = await emptyPgDatabase();
    cleanups.push(db.drop);
    const servers = await Promise.all([1, 2, 3].map(() => startServer(serverConfig(db.url))));
    const sql = new SQL({ url: db.url, max: 1 });
    cleanups.push(() => sql.close());
    try {
      for (const s of servers) expect((await call(s, "GET", "/readyz")).status).toBe(200);
      expect(await serversHolding(sql)).toBe(3);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
    expect(await serversHolding(sql)).toBe(0);
  });

  test("a lost session is noticed and the lock taken again", async () => {
    const { url, sql } = await databaseAt(LATEST);
    const hold = await holdSchema(url, silent, { everyMs: 50 });
    cleanups.push(hold.stop);
    const pids = async () =>
      (
        (await sql.unsafe(
          `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = ${SERVING_LOCK}
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        )) as { pid: number }[]
      ).map((r) => Number(r.pid));
    const [first] = await pids();
    expect(first).toBeGreaterThan(0);
    await sql.unsafe("SELECT pg_terminate_backend($1)", [first]);
    await until(async () => {
      const now = await pids();
      return now.length === 1 && now[0] !== first;
    }, "the lock taken again by a new session");
    const now = await pids();
    expect(now.length).toBe(1);
    expect(now[0]).not.toBe(first);
  });

  test("a migration it cannot run on, committed while its session was lost: the server is told to stop", async () => {
    const { url, sql } = await databaseAt(LATEST);
    const told: string[] = [];
    const hold = await holdSchema(url, silent, { everyMs: 50, onTooNew: (e) => told.push(e.message) });
    cleanups.push(hold.stop);
    const [held] = (await sql.unsafe(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = ${SERVING_LOCK}
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    )) as { pid: number }[];
    // In one transaction: the session ends and a newer build's migration commits before it is back.
    await sql.begin(async (tx) => {
      await tx.unsafe("SELECT pg_terminate_backend($1)", [Number(held!.pid)]);
      await tx.unsafe(
        "INSERT INTO assay_schema_migrations (version, name, applied_at, additive) VALUES ($1, 'from_a_newer_release', 'x', 0)",
        [LATEST + 1],
      );
    });
    await until(() => told.length > 0, "the server told to stop");
    expect(told).toEqual([expect.stringContaining(`schema ${LATEST + 1}, this build knows ${LATEST}`)]);
    await Bun.sleep(200); // a few more checks' worth: told once, not at every check
    expect(told.length).toBe(1);
  });

  test("a server that takes the lock after a migration it cannot run on refuses", async () => {
    const { url, sql } = await databaseAt(LATEST);
    await sql.unsafe(
      "INSERT INTO assay_schema_migrations (version, name, applied_at, additive) VALUES ($1, 'from_a_newer_release', 'x', 0)",
      [LATEST + 1],
    );
    await expect(holdSchema(url, silent)).rejects.toThrow(`schema ${LATEST + 1}, this build knows ${LATEST}`);
    expect(await serversHolding(sql)).toBe(0);
  });
});
