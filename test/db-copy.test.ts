// `assay db copy` (issue #20): an installation on SQLite moved to PostgreSQL with every row and
// its content — users, tokens, workflows and versions, runs and findings, sliced content,
// webhooks and their deliveries, the audit log — verified by counts and checksums; a second run
// changes nothing; a target holding other rows is refused unless --replace. A server on the
// copy then answers as the original did. Runs in the SQLite pass, when PostgreSQL is installed.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { testConfig } from "../src/config.ts";
import { createPgDb } from "../src/db/postgres.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { emptyPgDatabase, onPostgres } from "./helpers/backend.ts";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { pgBinDir } from "./helpers/pg-cluster.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const MAIN = join(import.meta.dir, "../src/main.ts");
const JSON_CT = { "content-type": "application/json" };

function assay(...args: string[]) {
  const p = Bun.spawnSync([process.execPath, MAIN, ...args], { stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

describe.skipIf(onPostgres || !pgBinDir())("assay db copy, SQLite → PostgreSQL", () => {
  let s: TestServer;
  let copy: RunningServer | null = null;
  const targets: { url: string; drop(): Promise<void> }[] = [];
  const runs: { id: string; url: string }[] = [];
  const answers = new Map<string, unknown>();
  let big = "";
  let goneUser = 0;
  let goneWebhook = 0;
  let pinnedVersion: unknown;

  beforeAll(async () => {
    s = await startTestServer({ webhook_allow_private: true });
    await createWorkflow(s, s.rootToken, {
      slug: "orders",
      allowed_file_types: ["JSON"],
      steps: [
        { name: "shape", validator: "json_schema", config: { schema: { type: "object", required: ["id"] } } },
      ],
    });
    // A step pinning a stored schema: its config and the pinned document are rows of their own.
    const stored = await call(s, "POST", "/api/v1/orgs/acme/schemas/", {
      token: s.rootToken,
      body: { uri: "https://schemas.example.com/id.json", kind: "json_schema", schema: { required: ["id"] } },
    });
    expect(stored.status).toBe(201);
    await createWorkflow(s, s.rootToken, {
      slug: "pinned",
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "ref",
          validator: "json_schema",
          config: { schema: { $ref: "https://schemas.example.com/id.json" } },
        },
      ],
    });
    pinnedVersion = (
      await call(s, "GET", "/api/v1/orgs/acme/workflows/pinned/versions/1/", { token: s.rootToken })
    ).json.steps;
    expect(JSON.stringify(pinnedVersion)).toContain('"required":["id"]');
    // A second version of the workflow, and a webhook whose deliveries are rows too.
    const patched = await call(s, "PATCH", "/api/v1/orgs/acme/workflows/orders/", {
      token: s.rootToken,
      body: { name: "Orders v2" },
    });
    expect(patched.status).toBe(200);
    const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: s.rootToken,
      body: { url: "http://127.0.0.1:9/hook" },
    });
    expect(hook.status).toBe(201);
    // The newest user and webhook deleted before the copy: their ids stay theirs on the target.
    const gone = await call(s, "POST", "/api/v1/admin/users/", {
      token: s.rootToken,
      body: { username: "gone" },
    });
    goneUser = gone.json.id;
    expect((await call(s, "DELETE", "/api/v1/admin/users/gone/", { token: s.rootToken })).status).toBe(204);
    const goneHook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: s.rootToken,
      body: { url: "http://127.0.0.1:9/gone" },
    });
    goneWebhook = goneHook.json.id;
    expect(
      (await call(s, "DELETE", `/api/v1/orgs/acme/webhooks/${goneWebhook}/`, { token: s.rootToken })).status,
    ).toBe(204);
    // Content over 1 MiB is stored in slices (content_chunks).
    big = JSON.stringify({ id: 1, pad: "x".repeat(1_500_000) });
    for (const [doc, prefer] of [
      ['{"id": 1}', "wait=5"],
      ['{"nope": 1}', "wait=5"],
      [big, "respond-async"],
    ] as const) {
      const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
        token: s.rootToken,
        raw: doc,
        headers: { ...JSON_CT, prefer },
      });
      expect([201, 202]).toContain(r.status);
      runs.push({ id: r.json.id, url: r.json.url });
    }
    for (const r of runs) {
      const done = await waitForRun(s, s.rootToken, r.url);
      answers.set(r.id, { ...done, url: undefined, workflow: { ...done.workflow, version_url: undefined } });
    }
    expect(await s.count("content_chunks")).toBeGreaterThan(0);
    await s.stop();
  }, 120_000);

  afterAll(async () => {
    await copy?.stop();
    await s.close();
    for (const t of targets) await t.drop();
  });

  test("copies every row and verifies it; the copy serves the same runs, content, tokens and log", async () => {
    const target = await emptyPgDatabase();
    targets.push(target);
    const r = assay("db", "copy", "--from", s.dataDir, "--to", target.url);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("Copied and verified");
    for (const table of [
      "runs",
      "run_findings",
      "content_chunks",
      "webhooks",
      "audit_log",
      "workflow_versions",
      "step_configs",
      "pinned_documents",
    ])
      expect(r.out).toMatch(new RegExp(`^${table}\\s+[1-9]\\d*\\s+[0-9a-f]{64}$`, "m"));

    // The chain of the audit log is intact on the copy.
    const verify = assay("audit", "verify", "--database-url", target.url);
    expect(verify.code).toBe(0);

    copy = await startServer(
      testConfig({
        port: 0,
        log_level: "silent",
        rate_limit_disabled: true,
        database_url: target.url,
        webhook_allow_private: true,
      }),
    );
    const me = await call(copy, "GET", "/api/v1/users/me/", { token: s.rootToken });
    expect(me.status).toBe(200);
    const pinned = await call(copy, "GET", "/api/v1/orgs/acme/workflows/pinned/versions/1/", {
      token: s.rootToken,
    });
    expect(pinned.json.steps).toEqual(pinnedVersion);
    for (const run of runs) {
      const got = await call(copy, "GET", `/api/v1/orgs/acme/runs/${run.id}/`, { token: s.rootToken });
      expect({
        ...got.json,
        url: undefined,
        workflow: { ...got.json.workflow, version_url: undefined },
      }).toEqual(answers.get(run.id));
    }
    const content = await fetch(`${copy.url}/api/v1/orgs/acme/runs/${runs[2]!.id}/content/`, {
      headers: { authorization: `Bearer ${s.rootToken}` },
    });
    expect(await content.text()).toBe(big);
    // New rows get new ids after the copied ones (identities moved on).
    const wf = await createWorkflow(copy, s.rootToken, {
      slug: "after",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    expect(wf.id).toBeGreaterThan(1);
    // Ids deleted before the copy are not handed out again on the target (migration 18).
    const user = await call(copy, "POST", "/api/v1/admin/users/", {
      token: s.rootToken,
      body: { username: "later" },
    });
    expect(user.json.id).toBeGreaterThan(goneUser);
    const hook = await call(copy, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: s.rootToken,
      body: { url: "http://127.0.0.1:9/later" },
    });
    expect(hook.json.id).toBeGreaterThan(goneWebhook);
    // …and back: PostgreSQL → SQLite carries the sequence, not just the highest id copied.
    expect((await call(copy, "DELETE", "/api/v1/admin/users/later/", { token: s.rootToken })).status).toBe(
      204,
    );
    await copy.stop();
    copy = null;
    const back = join(s.dataDir, "..", `${s.dataDir.split("/").at(-1)}-back`);
    const r2 = assay("db", "copy", "--from", target.url, "--to", back);
    expect(r2.code).toBe(0);
    const db = new Database(join(back, "assay.db"), { readonly: true });
    try {
      expect(db.query("SELECT seq FROM sqlite_sequence WHERE name = 'users'").get()).toEqual({
        seq: user.json.id,
      });
      expect(db.query("SELECT max(id) AS id FROM users").get()).toEqual({ id: expect.any(Number) });
      expect((db.query("SELECT max(id) AS id FROM users").get() as { id: number }).id).toBeLessThan(
        user.json.id,
      );
    } finally {
      db.close();
      rmSync(back, { recursive: true, force: true });
    }
  }, 120_000);

  test("a second copy into an identical target changes nothing", async () => {
    const target = await emptyPgDatabase();
    targets.push(target);
    expect(assay("db", "copy", "--from", s.dataDir, "--to", target.url).code).toBe(0);
    const again = assay("db", "copy", "--from", s.dataDir, "--to", target.url);
    expect(again.code).toBe(0);
    expect(again.out).toContain("The target already holds exactly these rows: nothing to do.");
  }, 120_000);

  test("assay migrate creates the schema in an empty database; commands refuse one without it", async () => {
    const target = await emptyPgDatabase();
    targets.push(target);
    const shown = target.url.replace(/:[^:@/]+@/, ":***@");
    const none = `No Assay installation in PostgreSQL ${shown}: name one with --data-dir or --database-url (or ASSAY_DATA_DIR, ASSAY_DATABASE_URL), or create one with "assay init".`;
    const list = assay("users", "list", "--database-url", target.url);
    expect({ code: list.code, err: list.err }).toEqual({ code: 1, err: `assay users: ${none}\n` });
    // A copy from it would have emptied the target (here: the SQLite installation) with --replace.
    const copy = assay("db", "copy", "--from", target.url, "--to", s.dataDir, "--replace");
    expect({ code: copy.code, err: copy.err }).toEqual({ code: 1, err: `assay db: ${none}\n` });
    const first = assay("migrate", "--database-url", target.url);
    expect({ code: first.code, err: first.err }).toEqual({ code: 0, err: "" });
    expect(first.out).toMatch(/^PostgreSQL .*: schema 0 → \d+\.\n$/);
    const again = assay("migrate", "--database-url", target.url);
    expect(again.out).toMatch(/: schema \d+, up to date\.\n$/);
    expect(assay("users", "list", "--database-url", target.url)).toMatchObject({ code: 0, out: "(none)\n" });
  }, 120_000);

  test("a target a server is running on is refused, --replace or not: nothing is copied", async () => {
    const source = await emptyPgDatabase();
    targets.push(source);
    expect(assay("init", "--org", "src", "--admin", "someone", "--database-url", source.url).code).toBe(0);
    // SQLite: a server running on the target data dir.
    const running = await startTestServer();
    try {
      const before = await running.count("users");
      const live = assay("db", "copy", "--from", source.url, "--to", running.dataDir, "--replace");
      expect(live.code).toBe(1);
      expect(live.err).toBe(
        `assay db: A server (PID ${process.pid}) is running on ${running.dataDir}: stop it before copying into it. Nothing copied.\n`,
      );
      expect(await running.count("users")).toBe(before);
    } finally {
      await running.close();
    }
    // PostgreSQL: a server holds its database (src/db/schema-hold.ts).
    const node = await startServer(
      testConfig({ port: 0, log_level: "silent", workers: 1, database_url: source.url }),
    );
    try {
      const onPg = assay("db", "copy", "--from", s.dataDir, "--to", source.url, "--replace");
      expect(onPg.code).toBe(1);
      expect(onPg.err).toMatch(
        /^assay db: A server is running on PostgreSQL .*: stop it before copying into it\. Nothing copied\.\n$/,
      );
    } finally {
      await node.stop();
    }
  }, 120_000);

  test("a target holding other rows is refused, unless --replace", async () => {
    const target = await emptyPgDatabase();
    targets.push(target);
    const other = assay("init", "--org", "other", "--admin", "someone", "--database-url", target.url);
    expect(other.code).toBe(0);
    const refused = assay("db", "copy", "--from", s.dataDir, "--to", target.url);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/^assay db: Nothing copied: the target already holds rows \(users: 1, /m);
    // The target handed out user ids up to 6 itself: --replace must not lower its sequence.
    for (const u of ["t2", "t3", "t4", "t5", "t6"])
      expect(assay("users", "create", u, "--database-url", target.url).code).toBe(0);
    const replaced = assay("db", "copy", "--from", s.dataDir, "--to", target.url, "--replace");
    expect(replaced.code).toBe(0);
    expect(replaced.out).toContain("Copied and verified");
    const pg = createPgDb(target.url, { max: 1 });
    try {
      const [seq] = (await pg.sql.unsafe(
        "SELECT last_value FROM pg_sequences WHERE sequencename = 'users_id_seq'",
      )) as { last_value: number | string }[];
      expect(Number(seq?.last_value)).toBe(6);
    } finally {
      await pg.close();
    }
    // A target that holds these rows already (copied before the marks were carried: lowered here)
    // gets the marks from a copy that has nothing else to do.
    const pg2 = createPgDb(target.url, { max: 1 });
    try {
      await pg2.sql.unsafe("SELECT setval('users_id_seq', 1)");
      const again = assay("db", "copy", "--from", s.dataDir, "--to", target.url);
      expect(again.out).toContain("nothing to do");
      const [seq] = (await pg2.sql.unsafe(
        "SELECT last_value FROM pg_sequences WHERE sequencename = 'users_id_seq'",
      )) as { last_value: number | string }[];
      expect(Number(seq?.last_value)).toBe(goneUser);
    } finally {
      await pg2.close();
    }
  }, 120_000);
});
