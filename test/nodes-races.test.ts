// Two nodes on one PostgreSQL database acting on the same row at once (PostgreSQL only). Each race
// is made exact, never left to timing: the test holds a lock on the table both requests write
// (`heldTogether`: each request waits there, then they go together), or holds a run at a gate.
// Each case expects what the two requests sent one after the other to one node would give.
import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { SYSTEM } from "../src/audit/actor.ts";
import { verifyChain } from "../src/audit/verify.ts";
import { testConfig } from "../src/config.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { hashPassword } from "../src/users/password-hash.ts";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow, until } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW, WORKER_WORKFLOW } from "./helpers/gates.ts";
import { heldTogether } from "./helpers/held-writes.ts";
import { startReceiver } from "./helpers/webhook-receiver.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

type Answer = Awaited<ReturnType<typeof call>>;
let a: TestServer;
let b: RunningServer;
let bDir = "";
let root = "";

describe.skipIf(!onPostgres)("two nodes, one row", () => {
  beforeAll(async () => {
    a = await startTestServer({ node_id: "race-a", webhook_allow_private: true });
    bDir = testTempDir("assay-race-b-");
    b = await startServer(
      testConfig({
        port: 0,
        log_level: "silent",
        rate_limit_disabled: true,
        workers: 2,
        sync_wait_ms: 60_000,
        data_dir: bDir,
        database_url: a.databaseUrl,
        node_id: "race-b",
        test_gates_dir: a.gates.dir,
        webhook_allow_private: true,
      }),
    );
    root = a.rootToken;
    await createWorkflow(a, root, HOLD_WORKFLOW);
    await createWorkflow(a, root, WORKER_WORKFLOW);
  }, 60_000);

  afterAll(async () => {
    a?.gates.openAll();
    await b?.stop();
    await a?.close();
    if (bDir) rmSync(bDir, { recursive: true, force: true });
  });

  test("one Idempotency-Key sent to both nodes at once: one run; the other 409 in progress, then its replay", async () => {
    const gate = a.gates.gate();
    const before = await a.count("runs");
    const send = (n: { url: string }) =>
      call(n, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
        token: root,
        raw: gate.doc(),
        headers: { "content-type": "application/json", "idempotency-key": "both-nodes" },
      });
    // Both wait at the key's insert; the first answer can only be the loser's (the winner's run
    // holds at the gate), which then lets the winner's run end.
    const loserOpens = (r: Awaited<ReturnType<typeof call>>) => {
      if (r.status !== 201) gate.open();
      return r;
    };
    const [x, y] = await heldTogether(a, "idempotency_keys", [
      () => send(a).then(loserOpens),
      () => send(b).then(loserOpens),
    ]);
    const [won, lost] = x!.status === 201 ? [x!, y!] : [y!, x!];
    expect([won.status, won.json.status]).toEqual([201, "succeeded"]);
    expect(lost.json).toEqual(
      errorBody(
        409,
        "idempotency_key_in_progress",
        "A request with this Idempotency-Key is still in progress; retry shortly.",
      ),
    );
    expect(lost.headers.get("retry-after")).toBe("1");
    expect(await a.count("runs")).toBe(before + 1);
    // The retry, on either node, replays the one run.
    for (const n of [a, b]) {
      const again = await send(n);
      expect([again.status, again.headers.get("idempotent-replayed"), again.json.id]).toEqual([
        201,
        "true",
        won.json.id,
      ]);
    }
    expect(await a.count("runs")).toBe(before + 1);
  });

  test("audit entries appended by both nodes at once: one chain, verified", async () => {
    const create = (n: { url: string }, slug: string) => () =>
      call(n, "POST", "/api/v1/orgs/acme/workflows/", {
        token: root,
        body: { slug, name: slug, allowed_file_types: ["JSON"], steps: [] },
      });
    const before = await a.count("audit_log");
    const rs = await heldTogether(a, "audit_head", [
      create(a, "chain-a1"),
      create(b, "chain-b1"),
      create(a, "chain-a2"),
      create(b, "chain-b2"),
      create(a, "chain-a3"),
      create(b, "chain-b3"),
    ]);
    expect(rs.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(await a.count("audit_log")).toBe(before + 6);
    const v = await verifyChain(a.deps.db);
    expect({ ok: v.ok, broken: v.broken, checked: v.checked }).toEqual({
      ok: true,
      broken: null,
      checked: before + 6,
    });
  });

  test("one If-Match sent to both nodes at once: one 200, one 412 naming the version the other saved", async () => {
    await createWorkflow(a, root, { slug: "tagged", allowed_file_types: ["JSON"], steps: [] });
    const path = "/api/v1/orgs/acme/workflows/tagged/";
    const tag = (await call(b, "GET", path, { token: root })).headers.get("etag")!;
    expect(tag).toBe('"1"');
    const patch = (n: { url: string }, name: string) => () =>
      call(n, "PATCH", path, { token: root, body: { name }, headers: { "if-match": tag } });
    const rs = await heldTogether(a, "workflows", [patch(a, "by a"), patch(b, "by b")]);
    const won = rs.find((r) => r.status === 200)!;
    const lost = rs.find((r) => r !== won)!;
    expect(won.headers.get("etag")).toBe('"2"');
    expect(lost.json).toEqual(
      errorBody(
        412,
        "precondition_failed",
        `If-Match names another version than the workflow's current one (ETag "2"): read it again.`,
      ),
    );
    const now = await call(a, "GET", path, { token: root });
    expect([now.json.version, now.json.name]).toEqual([2, won.json.name]);
    const versions = await a.row<{ n: number | string }>(
      "SELECT count(*) AS n FROM workflow_versions WHERE workflow_id = ?",
      now.json.id,
    );
    expect(Number(versions!.n)).toBe(2);
  });

  test("both nodes claim the outbox at once: each delivery attempted once, by one node", async () => {
    const rx = startReceiver();
    try {
      const hook = await call(a, "POST", "/api/v1/orgs/acme/webhooks/", {
        token: root,
        body: { url: `${rx.url}/claims`, events: ["run.completed"], workflow_slugs: ["fast"] },
      });
      expect(hook.status).toBe(201);
      const side = new SQL({ url: a.databaseUrl!, max: 1 });
      const waiting = async () =>
        Number(
          (await a.row<{ n: number | string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory'",
          ))!.n,
        );
      try {
        await side.begin(async (tx) => {
          // The lock claims take turns under (src/webhooks/outbox-store.ts, CLAIM_LOCK): every
          // node's claim waits here while the runs' deliveries are written.
          await tx.unsafe(`SELECT pg_advisory_xact_lock(${0x41_53_57_48_43_4c})`);
          for (let i = 0; i < 6; i++) {
            const r = await call(i % 2 ? b : a, "POST", "/api/v1/orgs/acme/workflows/fast/runs/", {
              token: root,
              raw: "{}",
              headers: { "content-type": "application/json" },
            });
            expect(r.status).toBe(201);
          }
          await until(async () => (await waiting()) >= 2, "both nodes' claims waiting");
        });
      } finally {
        await side.close();
      }
      const id = Number(hook.json.id);
      await until(
        async () =>
          Number(
            (await a.row<{ n: number | string }>(
              "SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ? AND status = 'succeeded'",
              id,
            ))!.n,
          ) === 6,
        "six deliveries succeeded",
      );
      const tries = await a.sql<{ n: number | string }>(
        "SELECT count(t.id) AS n FROM webhook_deliveries d LEFT JOIN webhook_attempts t ON t.delivery_id = d.id WHERE d.webhook_id = ? GROUP BY d.id",
        id,
      );
      expect(tries.map((t) => Number(t.n))).toEqual([1, 1, 1, 1, 1, 1]);
      const ids = rx.received.map((r) => r.headers.get("webhook-id"));
      expect([ids.length, new Set(ids).size]).toEqual([6, 6]);
    } finally {
      await rx.stop();
    }
  });

  describe("with the limits on", () => {
    // Two more nodes, with the limits on (the others run without): 6 requests a minute per token.
    const limited: RunningServer[] = [];
    const dirs: string[] = [];
    beforeAll(async () => {
      for (const id of ["race-l1", "race-l2"]) {
        const dir = testTempDir("assay-race-l-");
        dirs.push(dir);
        limited.push(
          await startServer(
            testConfig({
              port: 0,
              log_level: "silent",
              workers: 1,
              data_dir: dir,
              database_url: a.databaseUrl,
              node_id: id,
              rate_limit_per_minute: 6,
            }),
          ),
        );
      }
    });
    afterAll(async () => {
      for (const n of limited) await n.stop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    /** Sends `n` requests over both nodes while `hold` (SQL) is held, once all of them wait. */
    async function whileHeld(
      hold: string,
      holdParams: string[],
      n: number,
      send: (node: RunningServer, i: number) => Promise<Awaited<ReturnType<typeof call>>>,
    ) {
      const side = new SQL({ url: a.databaseUrl!, max: 1 });
      let sent: Promise<Awaited<ReturnType<typeof call>>>[] = [];
      try {
        await side.begin(async (tx) => {
          await tx.unsafe(hold, holdParams);
          sent = Array.from({ length: n }, (_, i) => send(limited[i % 2]!, i));
          for (const p of sent) p.catch(() => {});
          await until(async () => {
            const [w] = await a.sql<{ n: number | string }>(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%assay_%_take%'",
            );
            return Number(w!.n) >= n;
          }, `${n} requests waiting`);
        });
      } finally {
        await side.close();
      }
      return Promise.all(sent);
    }

    test("12 sign-ins for one username at once over two nodes: 10 counted, 2 refused", async () => {
      const key = `user:${createHash("sha256").update("root").digest("hex")}`;
      // The username's window, as assay_window_take locks it (migration 9): every attempt waits.
      const answers = await whileHeld(
        "SELECT pg_advisory_xact_lock(hashtextextended('assay_window:' || $1, 0))",
        [key],
        12,
        (n, i) =>
          call(n, "POST", "/api/v1/auth/login/", { body: { username: "root", password: `wrong ${i}` } }),
      );
      const refused = answers.filter((r) => r.status === 429);
      expect([answers.filter((r) => r.status === 401).length, refused.length]).toEqual([10, 2]);
      for (const r of refused) expect(r.json).toEqual(errorBody(429, "rate_limited"));
    }, 30_000);

    test("one request, then 8 with the same token at once over two nodes: 5 of them pass, 3 refused", async () => {
      const u = await a.user("spender");
      // The budget's row made by one request first. Without it, the first of the 8 to take the
      // lock wrote its own arrival time as the budget's start, and one that arrived a millisecond
      // earlier but came later found a millisecond less room: 5 passed on a busy machine (CI).
      // After it, the budget runs ahead of every arrival by whole intervals (10 s), and the
      // millisecond order of the 8 no longer matters.
      expect((await call(limited[0]!, "GET", "/api/v1/users/me/", { token: u.token })).status).toBe(200);
      // Every budget's row held (assay_rate_take inserts, then locks, the token's and user's).
      const answers = await whileHeld("LOCK TABLE rate_limits IN SHARE MODE", [], 8, (n) =>
        call(n, "GET", "/api/v1/users/me/", { token: u.token }),
      );
      const refused = answers.filter((r) => r.status === 429);
      expect([answers.filter((r) => r.status === 200).length, refused.length]).toEqual([5, 3]);
      for (const r of refused) expect(r.json).toEqual(errorBody(429, "rate_limited"));
    }, 30_000);
  });

  for (const [what, slug, send, answer] of [
    [
      "deleted",
      "fading",
      (o: string, admin: string) => call(a, "DELETE", `/api/v1/orgs/${o}/`, { token: admin }),
      204,
    ],
    [
      "suspended",
      "pausing",
      (o: string) => call(a, "POST", `/api/v1/admin/orgs/${o}/suspend/`, { token: root }),
      200,
    ],
  ] as const)
    test(`an org ${what} through node a while node b writes the end of a run that notifies it: the ${what === "deleted" ? "deletion" : "suspension"} waits for that write`, async () => {
      await a.org(slug);
      const adm = await a.user(`${slug}-admin`, slug, "admin");
      await createWorkflow(a, adm.token, HOLD_WORKFLOW, slug);
      const rx = startReceiver();
      const side = new SQL({ url: a.databaseUrl!, max: 1 });
      const waitingOn = async (pattern: string) => (await lockWaiters(pattern)) > 0;
      try {
        const hook = await call(a, "POST", `/api/v1/orgs/${slug}/webhooks/`, {
          token: adm.token,
          body: { url: `${rx.url}/${slug}`, events: ["run.completed"] },
        });
        expect(hook.status).toBe(201);
        const gate = a.gates.gate();
        // Its sync wait runs out: written running, so its end is an UPDATE of its row (a run
        // written once in its final state inserts it, and the foreign key holds the org's row).
        const started = await call(b, "POST", `/api/v1/orgs/${slug}/workflows/hold/runs/`, {
          token: adm.token,
          raw: gate.doc(),
          headers: { "content-type": "application/json", prefer: "wait=1" },
        });
        await gate.held();
        expect([started.status, started.json.status]).toEqual([202, "running"]);
        let answered = false;
        let deleting: Promise<Awaited<ReturnType<typeof call>>> | null = null;
        await side.begin(async (tx) => {
          // Node b's final transaction has read the org's webhooks and waits to write the delivery.
          await tx.unsafe("LOCK TABLE webhook_deliveries IN SHARE MODE");
          gate.open();
          await until(() => waitingOn("INSERT INTO webhook_deliveries%"), "node b's delivery write waiting");
          deleting = send(slug, adm.token);
          deleting.then(() => {
            answered = true;
          });
          deleting.catch(() => {});
          // Either answered already (the change did not wait for the run's end), or waiting.
          await until(
            async () => answered || (await waitingOn("%FROM orgs WHERE id%FOR UPDATE%")),
            "the deletion answered or waiting",
          );
        });
        // The change came after the run's end, not before: answered while the run's end (and its
        // delivery) was still to be written, it would leave a run that ended in a deleted or
        // suspended org notifying its webhooks once the org is restored (docs/webhooks.md).
        expect(answered).toBe(false);
        expect((await deleting!)!.status).toBe(answer);
        const rows = await a.sql<{ event: string }>(
          "SELECT d.event FROM webhook_deliveries d WHERE d.webhook_id = ?",
          hook.json.id,
        );
        expect(rows.map((r) => r.event)).toEqual(["run.completed"]);
      } finally {
        await side.close();
        await rx.stop();
      }
    });

  test("a run's end written by node b while node a's deletion of its org is under way: no delivery", async () => {
    await a.org("gone");
    const adm = await a.user("gone-admin", "gone", "admin");
    await createWorkflow(a, adm.token, HOLD_WORKFLOW, "gone");
    const rx = startReceiver();
    const side = new SQL({ url: a.databaseUrl!, max: 1 });
    try {
      const hook = await call(a, "POST", "/api/v1/orgs/gone/webhooks/", {
        token: adm.token,
        body: { url: `${rx.url}/gone`, events: ["run.completed"] },
      });
      expect(hook.status).toBe(201);
      const gate = a.gates.gate();
      const started = await call(b, "POST", "/api/v1/orgs/gone/workflows/hold/runs/", {
        token: adm.token,
        raw: gate.doc(),
        headers: { "content-type": "application/json", prefer: "wait=1" },
      });
      await gate.held();
      expect([started.status, started.json.status]).toEqual([202, "running"]);
      let deleting: Promise<Awaited<ReturnType<typeof call>>> | null = null;
      await side.begin(async (tx) => {
        // The deletion holds the org's row and waits to append its audit entry.
        await tx.unsafe("SELECT seq FROM audit_head WHERE id = 1 FOR UPDATE");
        deleting = call(a, "DELETE", "/api/v1/orgs/gone/", { token: adm.token });
        deleting.catch(() => {});
        await until(() => lockWaiters("%audit_head%").then((n) => n > 0), "the deletion waiting");
        gate.open();
        // The run's end reads the org's webhooks: it waits for the deletion, or (without that
        // lock) commits now, notifying a webhook of an org that is being deleted.
        await until(
          async () =>
            (await lockWaiters("%FROM webhooks w JOIN orgs%")) > 0 ||
            (await a.sql("SELECT id FROM webhook_deliveries WHERE webhook_id = ?", hook.json.id)).length > 0,
          "node b's final write waiting, or done",
        );
      });
      expect((await deleting!)!.status).toBe(204);
      const status = async () =>
        (await a.row<{ status: string }>("SELECT status FROM runs WHERE id = ?", started.json.id))!.status;
      await until(async () => (await status()) !== "running", "node b's final write");
      expect(await status()).toBe("succeeded");
      expect(await a.sql("SELECT id FROM webhook_deliveries WHERE webhook_id = ?", hook.json.id)).toEqual([]);
    } finally {
      await side.close();
      await rx.stop();
    }
  });

  describe("a sign-in on node b and a password change on node a at once", () => {
    const OLD = "old password 1234";
    const NEW = "new password 5678";
    /** A user with a password and a token (the change goes through the API with the token). */
    async function signer(name: string) {
      const u = await a.user(name);
      await a.deps.users.setPassword(u.id, await hashPassword(OLD), SYSTEM);
      return u;
    }
    const signIn = (name: string) =>
      call(b, "POST", "/api/v1/auth/login/", { body: { username: name, password: OLD } });
    const change = (token: string) =>
      call(a, "POST", "/api/v1/users/me/password/", {
        token,
        body: { current_password: OLD, new_password: NEW },
      });
    /** Holds the audit log's head (the last write of both transactions) while `first`, then `second`, wait. */
    async function inTurn(first: () => Promise<Answer>, second: () => Promise<Answer>) {
      const side = new SQL({ url: a.databaseUrl!, max: 1 });
      const sent: Promise<Answer>[] = [];
      const waiting = async () =>
        Number(
          (await a.row<{ n: number | string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          ))!.n,
        );
      try {
        await side.begin(async (tx) => {
          await tx.unsafe("SELECT seq FROM audit_head WHERE id = 1 FOR UPDATE");
          for (const r of [first, second]) {
            const p = r();
            p.catch(() => {});
            sent.push(p);
            await until(async () => (await waiting()) >= sent.length, `${sent.length} waiting`);
          }
        });
      } finally {
        await side.close();
      }
      return Promise.all(sent);
    }

    test("the sign-in first: its session ends with the change, as every other one does", async () => {
      const u = await signer("signer-1");
      const [login, changed] = await inTurn(
        () => signIn("signer-1"),
        () => change(u.token),
      );
      expect([login!.status, changed!.status]).toEqual([200, 204]);
      const cookie = login!.headers.get("set-cookie")!.split(";")[0]!;
      for (const n of [a, b]) {
        const me = await call(n, "GET", "/api/v1/users/me/", { headers: { cookie } });
        expect(me.status).toBe(401);
      }
    });

    test("two changes checked against the same password, one per node: the second is checked again, 400", async () => {
      const u = await signer("signer-3");
      const [first, second] = await inTurn(
        () => change(u.token),
        () =>
          call(b, "POST", "/api/v1/users/me/password/", {
            token: u.token,
            body: { current_password: OLD, new_password: "third password 9012" },
          }),
      );
      expect(first!.status).toBe(204);
      expect(second!.json).toEqual(
        errorBody(400, "invalid_request", "The current password is incorrect.", [
          { field: "current_password", code: "incorrect", message: "The current password is incorrect." },
        ]),
      );
      const login = (password: string) =>
        call(a, "POST", "/api/v1/auth/login/", { body: { username: "signer-3", password } });
      expect((await login(NEW)).status).toBe(200);
      expect((await login("third password 9012")).status).toBe(401);
    });

    test("the change first: the sign-in with the old password is refused", async () => {
      const u = await signer("signer-2");
      const [changed, login] = await inTurn(
        () => change(u.token),
        () => signIn("signer-2"),
      );
      expect(changed!.status).toBe(204);
      expect(login!.json).toEqual(errorBody(401, "authentication_required", "Invalid username or password."));
      const fresh = await call(b, "POST", "/api/v1/auth/login/", {
        body: { username: "signer-2", password: NEW },
      });
      expect(fresh.status).toBe(200);
    });
  });

  test("a member demoted, then removed, through one node: refused on the other's next request", async () => {
    const u = await a.user("moved", "acme", "admin");
    const hooks = "/api/v1/orgs/acme/webhooks/";
    // Node b has the membership cached (the second request is a cache hit).
    for (let i = 0; i < 2; i++) expect((await call(b, "GET", hooks, { token: u.token })).status).toBe(200);
    const demote = await call(a, "PATCH", "/api/v1/orgs/acme/members/moved/", {
      token: root,
      body: { role: "viewer" },
    });
    expect(demote.status).toBe(200);
    const onB = await call(b, "GET", hooks, { token: u.token });
    expect(onB.json).toEqual(errorBody(403, "permission_denied"));
    expect(onB.json).toEqual((await call(a, "GET", hooks, { token: u.token })).json);
    expect((await call(b, "GET", "/api/v1/orgs/acme/", { token: u.token })).status).toBe(200);
    const removed = await call(a, "DELETE", "/api/v1/orgs/acme/members/moved/", { token: root });
    expect(removed.status).toBe(204);
    const gone = await call(b, "GET", "/api/v1/orgs/acme/", { token: u.token });
    expect(gone.json).toEqual(errorBody(403, "permission_denied"));
    expect(gone.json).toEqual((await call(a, "GET", "/api/v1/orgs/acme/", { token: u.token })).json);
  });

  test("a workflow deactivated, then deleted, through one node: the other's next run start is 409, then 404", async () => {
    await createWorkflow(a, root, WORKER_WORKFLOW_2);
    const runs = "/api/v1/orgs/acme/workflows/fast2/runs/";
    const start = (n: { url: string }) =>
      call(n, "POST", runs, { token: root, raw: "{}", headers: { "content-type": "application/json" } });
    for (let i = 0; i < 2; i++) expect((await start(b)).status).toBe(201);
    const off = await call(a, "PATCH", "/api/v1/orgs/acme/workflows/fast2/", {
      token: root,
      body: { status: "inactive" },
    });
    expect(off.status).toBe(200);
    const inactive = await start(b);
    expect(inactive.json).toEqual(errorBody(409, "workflow_inactive"));
    expect(inactive.json).toEqual((await start(a)).json);
    const on = await call(a, "PATCH", "/api/v1/orgs/acme/workflows/fast2/", {
      token: root,
      body: { status: "active" },
    });
    expect(on.status).toBe(200);
    expect((await start(b)).status).toBe(201);
    expect((await call(a, "DELETE", "/api/v1/orgs/acme/workflows/fast2/", { token: root })).status).toBe(204);
    const gone = await start(b);
    expect(gone.json).toEqual(errorBody(404, "not_found"));
    expect(gone.json).toEqual((await start(a)).json);
  });

  test("a token revoked through node a while node b's sync run waits: node b answers 401, the run kept", async () => {
    const u = await a.user("waiting", "acme", "executor");
    const gate = a.gates.gate();
    const pending = call(b, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: u.token,
      raw: gate.doc(),
      headers: { "content-type": "application/json" },
    });
    await gate.held();
    const revoked = await call(a, "DELETE", `/api/v1/users/me/tokens/${u.tokenId}/`, { token: u.token });
    expect(revoked.status).toBe(204);
    gate.open();
    expect((await pending).json).toEqual(
      errorBody(401, "authentication_required", "The token has been revoked."),
    );
    const kept = await a.row<{ status: string }>("SELECT status FROM runs WHERE created_by = ?", u.id);
    expect(kept!.status).toBe("succeeded");
  });

  test("an org deleted through node a: node b's sync run waiting gets 403, and so does its next run start", async () => {
    await a.org("doomed");
    const u = await a.user("doomed-admin", "doomed", "admin");
    await createWorkflow(a, u.token, HOLD_WORKFLOW, "doomed");
    const gate = a.gates.gate();
    const path = "/api/v1/orgs/doomed/workflows/hold/runs/";
    const send = () =>
      call(b, "POST", path, {
        token: u.token,
        raw: gate.doc(),
        headers: { "content-type": "application/json" },
      });
    const pending = send();
    await gate.held();
    const deleted = await call(a, "DELETE", "/api/v1/orgs/doomed/", { token: u.token });
    expect(deleted.status).toBe(204);
    gate.open();
    const waited = await pending;
    expect(waited.json).toEqual(errorBody(403, "permission_denied"));
    const next = await send();
    expect(next.json).toEqual(errorBody(403, "permission_denied"));
    expect(next.json).toEqual(
      (
        await call(a, "POST", path, {
          token: u.token,
          raw: gate.doc(),
          headers: { "content-type": "application/json" },
        })
      ).json,
    );
  });

  test("a cancel through node a meets node b's final write, the final write first: 409, the run succeeded, no run.cancel entry", async () => {
    // Node a's cancel channel is down: it writes the canceled state itself, conditionally (below).
    a.deps.executor.useCancelChannel(async () => false);
    const { answer, run, entries } = await cancelMeetsFinalWrite("final write first");
    expect(answer.json).toEqual(errorBody(409, "conflict", "The run is already succeeded."));
    expect([run.status, run.steps.map((x: { status: string }) => x.status)]).toEqual([
      "succeeded",
      ["passed"],
    ]);
    expect(entries).toEqual([]);
  }, 30_000);

  test("a cancel through node a meets node b's final write, the cancel first: 200 canceled, node b's write refused", async () => {
    const { answer, run, entries } = await cancelMeetsFinalWrite("cancel first");
    expect([answer.status, answer.json.status, answer.json.error]).toEqual([
      200,
      "canceled",
      "Canceled by root.",
    ]);
    expect([run.status, run.steps.map((x: { status: string }) => x.status)]).toEqual([
      "canceled",
      ["skipped"],
    ]);
    expect(entries).toHaveLength(1);
    // The audit chain holds after the refused write too.
    const v = await verifyChain(a.deps.db);
    expect({ ok: v.ok, broken: v.broken }).toEqual({ ok: true, broken: null });
  }, 30_000);

  test("a workflow deleted through node a while node b writes a run of it: both answered, the run kept and readable (by design)", async () => {
    await createWorkflow(a, root, { ...WORKER_WORKFLOW, slug: "fading-wf" });
    const side = new SQL({ url: a.databaseUrl!, max: 1 });
    let started: Promise<Answer> | null = null;
    let deleted: Answer | null = null;
    try {
      await side.begin(async (tx) => {
        // Node b's run has passed its checks and waits to write its submission.
        await tx.unsafe("LOCK TABLE submissions IN SHARE MODE");
        started = call(b, "POST", "/api/v1/orgs/acme/workflows/fading-wf/runs/", {
          token: root,
          raw: "{}",
          headers: { "content-type": "application/json" },
        });
        started.catch(() => {});
        await until(
          async () => (await lockWaiters("INSERT INTO submissions%")) > 0,
          "node b's write waiting",
        );
        deleted = await call(a, "DELETE", "/api/v1/orgs/acme/workflows/fading-wf/", { token: root });
      });
    } finally {
      await side.close();
    }
    // The run's request began before the deletion: it is answered as it began, and its run stays
    // readable under the deleted workflow's id, as a run queued before a deletion does.
    expect(deleted!.status).toBe(204);
    const run = await started!;
    expect([run.status, run.json.status]).toEqual([201, "succeeded"]);
    const read = await call(a, "GET", `/api/v1/orgs/acme/runs/${run.json.id}/`, { token: root });
    expect([read.status, read.json.workflow.slug]).toEqual([200, "fading-wf"]);
    const again = await call(b, "POST", "/api/v1/orgs/acme/workflows/fading-wf/runs/", {
      token: root,
      raw: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(again.json).toEqual(errorBody(404, "not_found"));
  });

  test("a token revoked through one node: refused by the other's next request, a run start included", async () => {
    const u = await a.user("short-lived", "acme", "executor");
    const runs = "/api/v1/orgs/acme/workflows/fast/runs/";
    const start = () =>
      call(b, "POST", runs, { token: u.token, raw: "{}", headers: { "content-type": "application/json" } });
    for (let i = 0; i < 2; i++) expect((await start()).status).toBe(201);
    const revoked = await call(a, "DELETE", `/api/v1/users/me/tokens/${u.tokenId}/`, { token: u.token });
    expect(revoked.status).toBe(204);
    expect((await start()).json).toEqual(
      errorBody(401, "authentication_required", "The token has been revoked."),
    );
  });
});

/** Statements waiting on a lock whose text matches `pattern` (LIKE). */
async function lockWaiters(pattern: string): Promise<number> {
  const [w] = await a.sql<{ n: number | string }>(
    "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ?",
    pattern,
  );
  return Number(w!.n);
}

/**
 * A run of `hold` started on node b, held at its gate, written running under node b (its sync wait
 * ran out); then the row is locked by the test while `order` makes node b's final write and node
 * a's cancel (its channel to node b down: it writes the canceled state itself, conditionally) wait
 * at that row in the order given, and lets them go. Returns the cancel's answer and the run.
 */
async function cancelMeetsFinalWrite(order: "final write first" | "cancel first") {
  const gate = a.gates.gate();
  const started = await call(b, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
    token: root,
    raw: gate.doc(),
    headers: { "content-type": "application/json", prefer: "wait=1" },
  });
  await gate.held();
  expect([started.status, started.json.status]).toEqual([202, "running"]);
  const id: string = started.json.id;
  const side = new SQL({ url: a.databaseUrl!, max: 1 });
  // Statements waiting on a lock that write this run's final state (the renewals of node b's
  // claims, every 10 s, may wait on the row too: not counted).
  const writers = async () => {
    const [w] = await a.sql<{ n: number | string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE runs SET status = %finished_at%'",
    );
    return Number(w!.n);
  };
  try {
    const { canceling } = await side.begin(async (tx) => {
      await tx.unsafe("SELECT id FROM runs WHERE id = $1 FOR UPDATE", [id]);
      let canceling: Promise<Awaited<ReturnType<typeof call>>> | null = null;
      const cancel = () => {
        canceling = call(a, "POST", `/api/v1/orgs/acme/runs/${id}/cancel/`, { token: root });
        canceling.catch(() => {});
      };
      const [first, second] =
        order === "cancel first" ? [cancel, () => gate.open()] : [() => gate.open(), cancel];
      first();
      await until(async () => (await writers()) >= 1, `the ${order.split(" ")[0]}'s write waiting`);
      second();
      await until(async () => (await writers()) >= 2, "both writes waiting");
      return { canceling: canceling! as Promise<Awaited<ReturnType<typeof call>>> };
    });
    const answer = await canceling;
    await until(() => b.deps.executor.stats().inFlight === 0, "node b's job to end");
    const run = await call(a, "GET", `/api/v1/orgs/acme/runs/${id}/`, { token: root });
    const audit = await call(a, "GET", "/api/v1/orgs/acme/audit/?action=run.cancel", { token: root });
    const entries = audit.json.results.filter((e: { target: { id: string } }) => e.target.id === id);
    return { answer, run: run.json, entries };
  } finally {
    await side.close();
  }
}

const WORKER_WORKFLOW_2 = { ...WORKER_WORKFLOW, slug: "fast2" };
