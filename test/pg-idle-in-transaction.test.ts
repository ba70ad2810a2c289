// Assay sets idle_in_transaction_session_timeout on its own PostgreSQL sessions
// (ASSAY_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS): a node paused in the middle of a transaction
// holds its row locks — the cache generation's, which every management write takes — only until
// then, even when the operator set nothing on the role (it was held for as long as the node stayed
// paused). 0 leaves the role's or database's value. PostgreSQL only.
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { PG_IDLE_IN_TRANSACTION_TIMEOUT_MS } from "../src/config.ts";
import { openDb } from "../src/db/open.ts";
import type { PgDb } from "../src/db/postgres.ts";
import { translatePgError } from "../src/db/postgres.ts";
import { DatabaseUnavailable, get } from "../src/db/program.ts";
import { onPostgres } from "./helpers/backend.ts";
import { until } from "./helpers/fixtures.ts";
import { type TestServer, call, restartTestServer, startTestServer } from "./helpers/server.ts";

const open: (TestServer | SQL)[] = [];
afterAll(async () => {
  for (const x of open.reverse()) await x.close().catch(() => {});
});

/** The value a session of the server's own pool has. */
const shown = async (s: TestServer) =>
  (
    await s.deps.db.exec(
      get<{ idle_in_transaction_session_timeout: string }>("SHOW idle_in_transaction_session_timeout"),
    )
  )?.idle_in_transaction_session_timeout;

describe.skipIf(!onPostgres)("idle_in_transaction_session_timeout on Assay's sessions", () => {
  test(`is ${PG_IDLE_IN_TRANSACTION_TIMEOUT_MS / 1000}s by default, over the database's own value; 0 leaves that`, async () => {
    expect(PG_IDLE_IN_TRANSACTION_TIMEOUT_MS).toBe(10_000);
    let s = await startTestServer();
    try {
      expect(await shown(s)).toBe("10s");
      // A database setting (a role's acts the same): Assay's startup parameter wins over it…
      const name = new URL(s.databaseUrl!).pathname.slice(1);
      await s.sql(`ALTER DATABASE ${name} SET idle_in_transaction_session_timeout = '7s'`);
      s = await restartTestServer(s);
      expect(await shown(s)).toBe("10s");
      s = await restartTestServer(s, { database_idle_in_transaction_timeout_ms: 1500 });
      expect(await shown(s)).toBe("1500ms");
      // …and 0 leaves it.
      s = await restartTestServer(s, { database_idle_in_transaction_timeout_ms: 0 });
      expect(await shown(s)).toBe("7s");
    } finally {
      await s.close();
    }
  });

  test("a transaction of the server's pool left idle past it is ended, and the server serves on", async () => {
    const s = await startTestServer({ database_idle_in_transaction_timeout_ms: 1000 });
    open.push(s);
    const watcher = new SQL({ url: s.databaseUrl!, max: 1 });
    open.push(watcher);
    const pool = (s.deps.db as PgDb).sql;
    let failure: unknown = null;
    await pool
      .begin(async (tx) => {
        // The generation's row, as a management write of a paused node holds it.
        await tx.unsafe("SELECT value FROM cache_generation WHERE id = 1 FOR UPDATE");
        const [{ pid }] = (await tx.unsafe("SELECT pg_backend_pid() AS pid")) as { pid: number }[];
        // Idle in the transaction, as a node paused between two statements: PostgreSQL ends it.
        await until(
          async () => !(await watcher.unsafe("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).length,
          "PostgreSQL to end the idle transaction's session",
        );
        await tx.unsafe("SELECT 1");
      })
      .catch((e) => {
        failure = e;
      });
    // The row lock went with the session: a write that takes it (a new token bumps the
    // generation) goes through, on another connection of the pool.
    expect(translatePgError(failure)).toBeInstanceOf(DatabaseUnavailable);
    const r = await call(s, "POST", "/api/v1/users/me/tokens/", {
      token: s.rootToken,
      body: { name: "after" },
    });
    expect(r.status).toBe(201);
  });
});

/**
 * A pooler that refuses the startup parameters it does not track, as PgBouncer does by default
 * (checked with PgBouncer 1.18: "unsupported startup parameter: …", SQLSTATE 08P01), and records
 * the parameters each connection sent.
 */
const TRACKED = new Set([
  "user",
  "database",
  "client_encoding",
  "datestyle",
  "timezone",
  "standard_conforming_strings",
  "application_name",
]);
async function refusingPooler() {
  const sent: Record<string, string>[] = [];
  const field = (code: string, text: string) => Buffer.concat([Buffer.from(code), Buffer.from(`${text}\0`)]);
  const server = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket, data) {
        const code = data.readInt32BE(4);
        if (data.length === 8 && code === 80877103) {
          socket.write("N"); // SSLRequest: no TLS here
          return;
        }
        const params: Record<string, string> = {};
        const parts = data.subarray(8, data.readInt32BE(0)).toString().split("\0");
        for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) params[parts[i]!] = parts[i + 1]!;
        sent.push(params);
        const unknown = Object.keys(params).find((k) => !TRACKED.has(k.toLowerCase()));
        const body = Buffer.concat([
          field("S", "FATAL"),
          field("V", "FATAL"),
          field("C", unknown ? "08P01" : "28000"),
          field("M", unknown ? `unsupported startup parameter: ${unknown}` : "no such user"),
          Buffer.from("\0"),
        ]);
        const head = Buffer.alloc(5);
        head.write("E");
        head.writeInt32BE(body.length + 4, 1);
        socket.write(Buffer.concat([head, body]));
        socket.end();
      },
    },
  });
  return {
    url: `postgres://assay:secret@127.0.0.1:${server.port}/assay`,
    sent,
    stop: () => server.stop(true),
  };
}

describe("behind a pooler that refuses the startup parameter", () => {
  test("the start stops at once, saying what to change; with 0 the parameter is not sent", async () => {
    const pooler = await refusingPooler();
    try {
      let waited = false;
      const config = { data_dir: "./unused", database_url: pooler.url, database_pool_size: 2 };
      const opening = openDb(config, { waitMs: 60_000, onWaiting: () => (waited = true) });
      await expect(opening).rejects.toThrow(
        `PostgreSQL postgres://assay:***@127.0.0.1:${new URL(pooler.url).port}/assay refused the startup parameter idle_in_transaction_session_timeout (a pooler such as PgBouncer passes on only the parameters it tracks). Set ASSAY_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS=0 and set it on Assay's role instead: ALTER ROLE … SET idle_in_transaction_session_timeout = '10s' (docs/postgres.md, "Roles and privileges").`,
      );
      expect(waited).toBe(false);
      expect(pooler.sent[0]).toMatchObject({ idle_in_transaction_session_timeout: "10000" });
      pooler.sent.length = 0;
      const off = openDb({ ...config, database_idle_in_transaction_timeout_ms: 0 }, { migrate: false });
      await expect(off).rejects.toThrow();
      expect(pooler.sent.length).toBeGreaterThan(0);
      expect(pooler.sent.filter((p) => "idle_in_transaction_session_timeout" in p)).toEqual([]);
    } finally {
      pooler.stop();
    }
  });
});
