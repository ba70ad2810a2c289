// Sync runs written in their final state share one INSERT INTO runs per group commit
// (src/runs/final-rows.ts), and on PostgreSQL one INSERT INTO submissions too. Each run must
// still get its own row with its own submission, a faulty run must fail alone, and nothing else
// may change — on both backends. On SQLite, with the main connection writing and with the writer
// thread (src/db/writer.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { UniqueViolation, insertEach } from "../src/db/program.ts";
import { onPostgres } from "./helpers/backend.ts";
import { finalRun } from "./helpers/final-run.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const JSON_CT = { "content-type": "application/json" };
const RUNS = "/api/v1/orgs/acme/workflows/orders/runs/";
const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
// The writer thread exists on SQLite only (PostgreSQL is its own writer).
const WRITER = onPostgres ? (["off"] as const) : (["off", "on"] as const);

describe.each(WRITER)("writer thread %s", (writer) => {
  let s: TestServer;

  beforeAll(async () => {
    s = await startTestServer({ writer_thread: writer });
    await createWorkflow(s, s.rootToken, {
      slug: "orders",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
  });
  afterAll(() => s.close());

  describe("through the API", () => {
    test("concurrent sync runs each get their own run, submission and content", async () => {
      const docs = Array.from({ length: 24 }, (_, i) => JSON.stringify({ order: i, pad: "x".repeat(i) }));
      const answers = await Promise.all(
        docs.map((raw) => call(s, "POST", RUNS, { token: s.rootToken, raw, headers: JSON_CT })),
      );
      for (const [i, r] of answers.entries()) {
        expect(r.status).toBe(201);
        expect(r.json.status).toBe("succeeded");
        expect(r.json.submission.sha256).toBe(sha256(docs[i]!));
        expect(r.json.submission.size).toBe(docs[i]!.length);
        const back = await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/`, { token: s.rootToken });
        expect(back.json).toEqual(r.json);
        const content = await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/content/`, {
          token: s.rootToken,
        });
        expect(content.text).toBe(docs[i]!);
      }
      expect(new Set(answers.map((r) => r.json.submission.id)).size).toBe(docs.length);
    });

    test.skipIf(onPostgres)(
      "SQLite: sync runs of an org without webhooks are committed by the writer thread when it is on",
      async () => {
        // The first run of the org fills the webhook cache on the main connection; from then on
        // each run's outbox is known to be empty, and its group goes to the thread.
        const post = (i: number) =>
          call(s, "POST", RUNS, { token: s.rootToken, raw: JSON.stringify({ w: i }), headers: JSON_CT });
        expect((await post(-1)).status).toBe(201);
        const before = s.deps.db.stats.transactions;
        const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(i)));
        expect(answers.map((r) => r.status)).toEqual(Array(10).fill(201));
        const onMain = s.deps.db.stats.transactions - before;
        if (writer === "on") expect(onMain).toBe(0);
        else expect(onMain).toBeGreaterThan(0);
      },
    );
  });

  /** Users inserted with insertEach in one transaction, and each row's key as stored, by name. */
  async function insertUsers(names: string[]) {
    const ts = new Date().toISOString();
    const ids = await s.deps.db.tx(() =>
      insertEach(
        "INSERT INTO users (username, created_at) VALUES (?, ?)",
        "id",
        names.map((u) => [u, ts]),
      ),
    );
    const rows = await s.sql<{ id: number; username: string }>(
      `SELECT id, username FROM users WHERE username IN (${names.map(() => "?").join(", ")})`,
      ...names,
    );
    const stored = new Map(rows.map((r) => [r.username, Number(r.id)]));
    return { ids, stored: names.map((u) => stored.get(u)) };
  }

  test("insertEach inserts every row, in order, and returns each row's key", async () => {
    const { ids, stored } = await insertUsers(["ie-a", "ie-b", "ie-c"].map((x) => `${x}-${writer}`));
    expect(ids).toEqual(stored as number[]);
    expect(ids[0]! < ids[1]! && ids[1]! < ids[2]!).toBe(true);
  });

  test("insertEach of more rows than one statement takes (PostgreSQL: 256) keeps each row's key", async () => {
    const names = Array.from({ length: 600 }, (_, i) => `many-${writer}-${i}`);
    const { ids, stored } = await insertUsers(names);
    expect(ids).toEqual(stored as number[]);
  });

  describe("the run store", () => {
    /** A final run of the workflow, as the inline lane writes it; `id` may repeat one on disk. */
    async function record(id: string, doc: string) {
      const wf = (await s.row<{ id: number; org_id: number }>(
        "SELECT id, org_id FROM workflows WHERE slug = 'orders'",
      ))!;
      const user = (await s.row<{ id: number }>("SELECT id FROM users WHERE username = 'root'"))!;
      return finalRun({
        id,
        orgId: Number(wf.org_id),
        workflowId: Number(wf.id),
        user: { id: Number(user.id), username: "root" },
        doc,
      });
    }

    test("a run that cannot be written fails alone; the others of its group commit are written", async () => {
      const taken = await call(s, "POST", RUNS, { token: s.rootToken, raw: "{}", headers: JSON_CT });
      expect(taken.status).toBe(201);
      const ids = [0, 1, 2, 3, 4].map((i) => `00000000-0000-7000-8000-00000000000${i}`);
      ids[2] = taken.json.id; // already on disk: its INSERT violates the primary key
      const submissions = await s.count("submissions");
      const records = await Promise.all(ids.map((id, i) => record(id, `{"n":${i}}`)));
      // Issued in one turn: one group commit.
      const results = await Promise.allSettled(records.map(([n, u]) => s.deps.runs.createFinal(n, u)));
      expect(results.map((r) => r.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
      ]);
      expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(UniqueViolation);
      expect(await s.count("submissions")).toBe(submissions + 4);
      for (const i of [0, 1, 3, 4]) {
        const sid = (results[i] as PromiseFulfilledResult<number>).value;
        const row = await s.row<{ submission_id: number; sha256: string }>(
          "SELECT r.submission_id, s.sha256 FROM runs r JOIN submissions s ON s.id = r.submission_id WHERE r.id = ?",
          ids[i]!,
        );
        expect(row).toEqual({ submission_id: sid, sha256: sha256(`{"n":${i}}`) });
      }
      const kept = await call(s, "GET", `/api/v1/orgs/acme/runs/${taken.json.id}/`, { token: s.rootToken });
      expect(kept.json).toEqual(taken.json);
    });

    test("a group of final runs costs one statement per submission and one for all runs on SQLite (none on the main connection with the writer thread); two on PostgreSQL", async () => {
      // The smallest of three tries: a timer of the server (a flush, a poll) may run a statement
      // of its own meanwhile, never during all three.
      const deltas: number[] = [];
      for (let t = 0; t < 3; t++) {
        const records = await Promise.all(
          [0, 1, 2, 3, 4, 5].map((i) => record(`00000000-0000-7000-8000-0000000001${t}${i}`, `{"m":${i}}`)),
        );
        const before = s.deps.db.stats.statements;
        const sids = await Promise.all(records.map(([n, u]) => s.deps.runs.createFinal(n, u)));
        deltas.push(s.deps.db.stats.statements - before);
        expect(new Set(sids).size).toBe(6);
      }
      // With the writer thread the group is committed on its connection: none on the main one.
      // PostgreSQL: one for the submissions, one for the runs.
      expect(Math.min(...deltas)).toBe(onPostgres ? 2 : writer === "on" ? 0 : 6 + 1);
    });
  });
});
