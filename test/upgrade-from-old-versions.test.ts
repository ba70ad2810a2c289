// Data written by earlier builds, through their own API, served by today's: every fixture under
// test/fixtures/upgrade/ is a dump of a data dir (or PostgreSQL database) that an old build made
// (README.md there says how), with the answers that build gave. Today's server migrates it at
// start; then everything the old build answered is read back and compared, old tokens, passwords
// and a web session still work, an idempotency key still replays, the runs and deliveries the
// old build left when it was killed are finished and sent, new runs on the old workflows end as
// the old runs did, and an old webhook still delivers, signed with its old secret.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { testConfig } from "../src/config.ts";
import { DB_FILE } from "../src/db/open.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { BACKEND, emptyPgDatabase, onPostgres } from "./helpers/backend.ts";
import { runAssay } from "./helpers/cli.ts";
import { call, errorBody } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";
import { eventually, startReceiver, verifyStandardWebhook } from "./helpers/webhook-receiver.ts";

const DIR = join(import.meta.dir, "fixtures/upgrade");

interface Fixture {
  commit: string;
  base: string;
  tokens: Record<"me" | "ci" | "expiring" | "alice" | "revoked", string>;
  passwords: Record<string, string>;
  session: { cookie: string; csrf: string };
  webhooks: { id: number; secret: string; url: string }[];
  idempotent: { key: string; run: string; status: number; doc: number };
  /** Runs started just before the old build was killed (SIGKILL): queued, running or finished. */
  inflight: { id: string; doc: number }[];
  docs: [workflow: string, body: string, contentType: string][];
  runs: { id: string; wf: string; doc: number; mode: string }[];
  answers: Record<string, unknown>;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

/** The origin of the receiver the old build delivered to (gone since). */
const receiverOrigin = (fx: Fixture) => new URL(fx.webhooks[0]!.url).origin;

/**
 * The fixture's data, in a new data dir or an empty database. Its sessions, idempotency keys and
 * expiring token are moved to now: they expire in hours or days, and the fixture was made once.
 * Its webhooks are pointed at `receiver`, in place of the old build's receiver.
 */
async function load(name: string, receiver: string, opts: { historyUpTo?: number } = {}) {
  const dump = readFileSync(join(DIR, `${name}.${BACKEND}.sql`), "utf8");
  const fx = JSON.parse(readFileSync(join(DIR, `${name}.${BACKEND}.json`), "utf8")) as Fixture;
  const now = new Date();
  const later = new Date(now.getTime() + 24 * 3600_000).toISOString();
  const refresh = [
    `UPDATE web_sessions SET expires_at = '${later}'`,
    `UPDATE idempotency_keys SET created_at = '${now.toISOString()}'`,
    `UPDATE api_tokens SET expires_at = '${later}' WHERE expires_at IS NOT NULL`,
    `UPDATE webhooks SET url = replace(url, '${receiverOrigin(fx)}', '${receiver}')`,
  ];
  const dataDir = testTempDir("assay-upgrade-");
  if (!onPostgres) {
    const db = new Database(join(dataDir, DB_FILE), { create: true });
    db.exec(dump);
    for (const q of refresh) db.exec(q);
    if (opts.historyUpTo) {
      // What builds from 2026-11-24 13:02 on wrote the first time they opened such a data dir:
      // every version up to user_version recorded as applied "before".
      db.exec(
        "CREATE TABLE assay_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL, additive INTEGER NOT NULL DEFAULT 0) STRICT",
      );
      for (let v = 1; v <= opts.historyUpTo; v++)
        db.query("INSERT INTO assay_schema_migrations VALUES (?, ?, 'before', 0)").run(v, `m${v}`);
    }
    db.close();
    return { dataDir, databaseUrl: null };
  }
  const pg = await emptyPgDatabase();
  cleanups.push(pg.drop);
  const sql = new SQL({ url: pg.url, max: 1 });
  await sql.unsafe(dump);
  for (const q of refresh) await sql.unsafe(q);
  await sql.close();
  return { dataDir, databaseUrl: pg.url };
}

async function serve(where: { dataDir: string; databaseUrl: string | null }): Promise<RunningServer> {
  const s = await startServer(
    testConfig({
      port: 0,
      log_level: "silent",
      workers: 1,
      rate_limit_disabled: true,
      webhook_allow_private: true,
      sync_wait_ms: 60_000,
      data_dir: where.dataDir,
      database_url: where.databaseUrl,
    }),
  );
  cleanups.push(() => s.stop());
  return s;
}

/** Differences where `now` lacks or changes a value `was` had (fields added since are fine). */
function lost(was: unknown, now: unknown, at = ""): string[] {
  if (Object.is(was, now)) return [];
  if (typeof was !== "object" || was === null || typeof now !== "object" || now === null)
    return [`${at}: ${JSON.stringify(was)} → ${JSON.stringify(now)}`];
  if (Array.isArray(was) !== Array.isArray(now)) return [`${at}: array ↔ object`];
  if (Array.isArray(was) && was.length !== (now as unknown[]).length)
    return [`${at}: ${was.length} items → ${(now as unknown[]).length}`];
  return Object.entries(was).flatMap(([k, v]) =>
    // last_used_at moves on every authenticated request, the reads of this test included; an
    // expiry is moved to now by load().
    k === "last_used_at" || (k === "expires_at" && v !== null && (now as Record<string, unknown>)[k] !== null)
      ? []
      : k in now
        ? lost(v, (now as Record<string, unknown>)[k], `${at}.${k}`)
        : [`${at}.${k}: missing`],
  );
}

const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith(`.${BACKEND}.json`))
  .map((f) => f.replace(`.${BACKEND}.json`, ""))
  .sort();

describe.each(fixtures)(`data written by build %s, served today (${BACKEND})`, (name) => {
  const fx = JSON.parse(readFileSync(join(DIR, `${name}.${BACKEND}.json`), "utf8")) as Fixture;
  let s: RunningServer;
  let where: Awaited<ReturnType<typeof load>>;

  const receiver = startReceiver();
  cleanups.push(() => receiver.stop());

  test("starts, and answers every read as the old build did", async () => {
    where = await load(name, receiver.url);
    s = await serve(where);
    for (const [path, old] of Object.entries(fx.answers)) {
      const r = await call(s, "GET", path, { token: fx.tokens.me });
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      // Links name the server they were read from; webhooks, the receiver load() gave them.
      const was = JSON.parse(
        JSON.stringify(old).replaceAll(fx.base, s.url).replaceAll(receiverOrigin(fx), receiver.url),
      );
      expect({ path, lost: lost(was, r.json) }).toEqual({ path, lost: [] });
    }
  });

  test("old tokens authenticate, a revoked one is 401; old passwords and the web session work", async () => {
    for (const name of ["me", "ci", "expiring", "alice"] as const)
      expect((await call(s, "GET", "/api/v1/users/me/", { token: fx.tokens[name] })).status).toBe(200);
    const revoked = await call(s, "GET", "/api/v1/users/me/", { token: fx.tokens.revoked });
    expect(revoked.status).toBe(401);
    expect(revoked.json).toEqual(errorBody(401, "authentication_required"));
    for (const [username, password] of Object.entries(fx.passwords)) {
      const r = await call(s, "POST", "/api/v1/auth/login/", { body: { username, password } });
      expect({ username, status: r.status }).toEqual({ username, status: 200 });
      expect(r.json.user.username).toBe(username);
    }
    const session = await call(s, "GET", "/api/v1/auth/session/", { headers: { cookie: fx.session.cookie } });
    expect(session.status).toBe(200);
    expect(session.json.user.username).toBe("alice");
    const write = await call(s, "PATCH", "/api/v1/orgs/acme/workflows/notes/", {
      headers: { cookie: fx.session.cookie, "x-csrf-token": fx.session.csrf },
      body: { description: "written with a session from the old build" },
    });
    expect(write.status).toBe(200);
  });

  test("an idempotency key recorded by the old build replays its answer", async () => {
    const [, body, contentType] = fx.docs[fx.idempotent.doc]!;
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
      token: fx.tokens.me,
      raw: body,
      headers: { "content-type": contentType, "idempotency-key": fx.idempotent.key },
    });
    expect(r.status).toBe(fx.idempotent.status);
    expect(r.headers.get("idempotent-replayed")).toBe("true");
    expect(r.json.id).toBe(fx.idempotent.run);
  });

  const syncStatus = (doc: number) => {
    const run = fx.runs.find((r) => r.mode === "sync" && r.doc === doc)!;
    return (fx.answers[`/api/v1/orgs/acme/runs/${run.id}/`] as { status: string }).status;
  };
  const deliveredRuns = () =>
    new Set(
      receiver.received
        .filter((d) => d.path === "/all")
        .map((d) => (d.json.data.run as { id: string } | undefined)?.id),
    );

  test("runs left queued or running by the killed old build finish, and its pending deliveries arrive", async () => {
    for (const f of fx.inflight) {
      const r = await eventually(async () => {
        const got = await call(s, "GET", `/api/v1/orgs/acme/runs/${f.id}/`, { token: fx.tokens.me });
        return ["queued", "running"].includes(got.json.status) ? undefined : got;
      });
      expect({ id: f.id, status: r.status, run: r.json.status }).toEqual({
        id: f.id,
        status: 200,
        run: syncStatus(f.doc),
      });
    }
    await receiver.waitFor(() => fx.inflight.every((f) => deliveredRuns().has(f.id)));
  });

  test("new runs on the old workflows end as the old runs did, and the old webhook delivers them", async () => {
    const hook = fx.webhooks[0]!;
    const started: string[] = [];
    for (const old of fx.runs.filter((r) => r.mode === "sync")) {
      const [wf, body, contentType] = fx.docs[old.doc]!;
      const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${wf}/runs/`, {
        token: fx.tokens.ci,
        raw: body,
        headers: { "content-type": contentType },
      });
      expect({ wf, doc: old.doc, status: r.status, run: r.json.status }).toEqual({
        wf,
        doc: old.doc,
        status: 201,
        run: syncStatus(old.doc),
      });
      started.push(r.json.id);
    }
    await receiver.waitFor(() => started.every((id) => deliveredRuns().has(id)));
    for (const d of receiver.received.filter((x) => x.path === "/all"))
      expect(verifyStandardWebhook(hook.secret, d.headers, d.body)).toBe(true);
  });

  test("the audit chain verifies after the upgrade", async () => {
    await s.stop();
    const args = where.databaseUrl ? ["--database-url", where.databaseUrl] : ["--data-dir", where.dataDir];
    const r = await runAssay(["audit", "verify", ...args]);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
    expect(r.out).toContain("Intact");
  });

  test.if(!onPostgres)("the upgraded data dir copies to PostgreSQL (assay db copy, verified)", async () => {
    const pg = await emptyPgDatabase();
    cleanups.push(pg.drop);
    const r = await runAssay(["db", "copy", "--from", where.dataDir, "--to", pg.url]);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
  });
});

// A data dir of 2026-11-24 10:02–12:22 (migration 8 without 7) that a build from 13:02 on opened
// first recorded 7 as applied "before" though it never ran; today's runs it.
describe.if(!onPostgres && fixtures.includes("fb326fc"))(
  "a data dir whose history says 7 ran when it did not",
  () => {
    test("starts, with migration 7 applied, and its runs read back", async () => {
      const fx = JSON.parse(readFileSync(join(DIR, "fb326fc.sqlite.json"), "utf8")) as Fixture;
      const s = await serve(await load("fb326fc", "http://127.0.0.1:9", { historyUpTo: 8 }));
      const old = fx.runs.find((r) => r.mode === "sync" && r.wf === "orders")!;
      const r = await call(s, "GET", `/api/v1/orgs/acme/runs/${old.id}/`, { token: fx.tokens.me });
      expect(r.status).toBe(200);
      const was = JSON.parse(
        JSON.stringify(fx.answers[`/api/v1/orgs/acme/runs/${old.id}/`]).replaceAll(fx.base, s.url),
      );
      expect(lost(was, r.json)).toEqual([]);
    });
  },
);

// A build before migration 9 (2026-11-24 12:30) claimed a run without a lease: one it was
// executing when it was killed is `running` with lease_until NULL. On PostgreSQL a node recovers
// only runs whose lease ran out, and NULL never did: the run stayed running for ever.
describe.if(onPostgres && fixtures.includes("fb326fc"))("a run a build before leases left running", () => {
  test("is taken up and finishes", async () => {
    const fx = JSON.parse(readFileSync(join(DIR, "fb326fc.postgres.json"), "utf8")) as Fixture;
    const receiver = startReceiver();
    cleanups.push(() => receiver.stop());
    const where = await load("fb326fc", receiver.url);
    const sql = new SQL({ url: where.databaseUrl!, max: 1 });
    // What that build wrote when it started a run (src/runs/store.ts then).
    const started = (await sql.unsafe(
      `UPDATE runs SET status = 'running', started_at = coalesce(started_at, '${new Date().toISOString()}'), attempts = attempts + 1
       WHERE id IN (SELECT id FROM runs WHERE status = 'queued' LIMIT 1) RETURNING id`,
    )) as { id: string }[];
    await sql.close();
    expect(started.length).toBe(1);
    const s = await serve(where);
    const r = await eventually(async () => {
      const got = await call(s, "GET", `/api/v1/orgs/acme/runs/${started[0]!.id}/`, { token: fx.tokens.me });
      return ["queued", "running"].includes(got.json.status) ? undefined : got;
    }, 30_000);
    const doc = fx.inflight.find((f) => f.id === started[0]!.id)!.doc;
    const sync = fx.runs.find((x) => x.mode === "sync" && x.doc === doc)!;
    expect({ status: r.status, run: r.json.status }).toEqual({
      status: 200,
      run: (fx.answers[`/api/v1/orgs/acme/runs/${sync.id}/`] as { status: string }).status,
    });
  });
});
