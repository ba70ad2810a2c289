// Migration 20 on a database written by schema 19 (a SQLite data dir, or PostgreSQL when the suite
// runs there), holding live and expired web sessions: the server migrates it, the purge a sign-in
// runs is a seek into the new index (not a scan of every session), it removes at most
// SESSION_PURGE_BATCH expired sessions a sign-in, oldest first, and never a live one.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SYSTEM } from "../src/audit/actor.ts";
import { testConfig } from "../src/config.ts";
import { DB_FILE } from "../src/db/open.ts";
import { createPgDb } from "../src/db/postgres.ts";
import { type Program, all, run } from "../src/db/program.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { PURGE_EXPIRED, SESSION_PURGE_BATCH } from "../src/web/store.ts";
import { onPostgres } from "./helpers/backend.ts";
import { databaseBefore } from "./helpers/schema-at.ts";
import { call } from "./helpers/server.ts";

const TS = "2026-11-20T10:00:00.000Z";
const PASSWORD = "correct horse battery";
const EXPIRED = SESSION_PURGE_BATCH + 50;
const LIVE_UNTIL = "2999-01-01T00:00:00.000Z";
// Expired ones a minute apart, so "oldest first" is observable.
const expiredAt = (i: number) => new Date(Date.parse("2001-01-01T00:00:00.000Z") + i * 60_000).toISOString();

function* seed(): Program<void> {
  yield* run("INSERT INTO users (id, username, created_at) VALUES (1, 'ann', ?)", TS);
  for (let i = 0; i < EXPIRED; i++)
    yield* run(
      "INSERT INTO web_sessions (user_id, digest, csrf, created_at, expires_at) VALUES (1, ?, 'c', ?, ?)",
      new Uint8Array([i >> 8, i & 255, 0]),
      TS,
      expiredAt(i),
    );
  yield* run(
    "INSERT INTO web_sessions (user_id, digest, csrf, created_at, expires_at) VALUES (1, ?, 'c', ?, ?)",
    new Uint8Array([255, 255, 1]),
    TS,
    LIVE_UNTIL,
  );
}

describe(`migration 0020 on a database at schema 19 (${onPostgres ? "PostgreSQL" : "SQLite"})`, () => {
  let server: RunningServer;
  let drop: () => Promise<void> = async () => {};
  let databaseUrl = "";
  let dataDir = "";
  const q = <T>(sql: string, ...p: (string | number)[]) => server.deps.db.exec(all<T>(sql, ...p));
  const signIn = () =>
    call(server, "POST", "/api/v1/auth/login/", { body: { username: "ann", password: PASSWORD } });
  const expiredLeft = async () =>
    q<{ expires_at: string }>(
      "SELECT expires_at FROM web_sessions WHERE expires_at <= ? ORDER BY expires_at",
      new Date().toISOString(),
    );

  beforeAll(async () => {
    const o = await databaseBefore(20, seed, { additiveColumn: true, prefix: "assay-m0020-" });
    drop = o.drop;
    databaseUrl = String(o.config.database_url ?? "");
    dataDir = String(o.config.data_dir);
    server = await startServer(testConfig({ ...o.config, port: 0, log_level: "silent", workers: 1 }));
    await server.deps.users.setPassword(1, await Bun.password.hash(PASSWORD), SYSTEM);
  });
  afterAll(async () => {
    await server?.stop();
    await drop();
  });

  test("is applied, recorded as additive, and keeps every session", async () => {
    expect(await q("SELECT version, additive FROM assay_schema_migrations WHERE version = 20")).toEqual([
      { version: 20, additive: 1 },
    ]);
    expect(await q("SELECT count(*) AS n FROM web_sessions")).toEqual([{ n: EXPIRED + 1 }]);
  });

  test.skipIf(onPostgres)("SQLite's plan for the purge searches the expiry index", () => {
    // A connection of the test's own: bun:sqlite leaves an EXPLAIN of a DELETE in progress after
    // all(), which would hold up the server's next commit on its connection.
    const raw = new Database(join(dataDir, DB_FILE), { readonly: true, strict: true });
    try {
      const plan = (sql: string, ...p: (string | number)[]) =>
        (raw.query(`EXPLAIN QUERY PLAN ${sql}`).all(...p) as { detail: string }[]).map((r) => r.detail);
      const purge = plan(PURGE_EXPIRED, TS, SESSION_PURGE_BATCH);
      // COVERING or not depends on what the planner knows of the table (ANALYZE): either is a seek.
      expect(purge).toContainEqual(
        expect.stringMatching(
          /^SEARCH web_sessions USING (COVERING )?INDEX web_sessions_expires \(expires_at<\?\)$/,
        ),
      );
      expect(purge.filter((d) => /^SCAN web_sessions\b|TEMP B-TREE/.test(d))).toEqual([]);
      // A password change ends the user's other sessions by user_id.
      const others = plan(
        "DELETE FROM web_sessions WHERE user_id = ? AND id <> coalesce(CAST(? AS INTEGER), -1)",
        1,
        1,
      );
      expect(others).toEqual([
        expect.stringMatching(
          /^SEARCH web_sessions USING (COVERING )?INDEX web_sessions_user \(user_id=\?\)$/,
        ),
      ]);
    } finally {
      raw.close();
    }
  });

  test.if(onPostgres)("PostgreSQL can run the purge from the expiry index", async () => {
    // A table this small is read whole whatever its indexes; without that choice the plan shows
    // the index serves the purge's range.
    const pg = createPgDb(databaseUrl, { max: 1 });
    try {
      const plan = await pg.sql.begin(async (tx) => {
        await tx.unsafe("SET LOCAL enable_seqscan = off");
        const literal = PURGE_EXPIRED.replace("?", `'${TS}'`).replace("?", String(SESSION_PURGE_BATCH));
        return (await tx.unsafe(`EXPLAIN ${literal}`)) as { "QUERY PLAN": string }[];
      });
      const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
      expect(text).toMatch(/Index (Only )?Scan (using|on) web_sessions_expires/);
      expect(text).toMatch(/Index Cond: \(expires_at <= '2026-11-20T10:00:00\.000Z'::text\)/);
    } finally {
      await pg.close();
    }
  });

  test(`a sign-in removes the ${SESSION_PURGE_BATCH} oldest expired sessions, the next one the rest, none live`, async () => {
    expect((await signIn()).status).toBe(200);
    const left = await expiredLeft();
    expect(left.map((r) => r.expires_at)).toEqual(
      Array.from({ length: EXPIRED - SESSION_PURGE_BATCH }, (_, i) => expiredAt(SESSION_PURGE_BATCH + i)),
    );
    expect((await signIn()).status).toBe(200);
    expect(await expiredLeft()).toEqual([]);
    // The live session seeded before the upgrade and the two sign-ins' own.
    expect(await q("SELECT count(*) AS n FROM web_sessions WHERE expires_at = ?", LIVE_UNTIL)).toEqual([
      { n: 1 },
    ]);
    expect(await q("SELECT count(*) AS n FROM web_sessions")).toEqual([{ n: 3 }]);
  });
});
