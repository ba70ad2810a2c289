// Crash safety (issue 5): the built binary is killed with SIGKILL in the middle of a burst of
// submissions and restarted on the same data (dir, or PostgreSQL database). Every run that got 201
// or 202 must exist and finish, none twice, and no run may appear that we did not submit. Once
// with one thread, once with two HTTP threads, the second writing the sync runs it serves on a
// connection of its own (src/http/threads/thread-runs.ts).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { ensureBinary, serveBinary } from "./helpers/binary.ts";
import { HOLD_WORKFLOW, createGates } from "./helpers/gates.ts";

const dir = mkdtempSync(join(tmpdir(), "assay-crash-"));
const gates = createGates();
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup) await c();
  gates.remove();
  rmSync(dir, { recursive: true, force: true });
});

for (const threads of [1, 2])
  test(`SIGKILL mid-burst, ${threads} HTTP thread(s): every acknowledged run survives and finishes exactly once`, async () => {
    const bin = ensureBinary();
    const dataDir = join(dir, `data-${threads}`);
    const pg = onPostgres ? await freshPgDatabase() : null;
    if (pg) cleanup.push(pg.drop);
    const env: Record<string, string> = {
      ASSAY_TEST_GATES_DIR: gates.dir,
      ASSAY_HTTP_THREADS: String(threads),
      ...(pg ? { ASSAY_DATABASE_URL: pg.url } : {}),
    };
    const where = pg ? [] : ["--data-dir", dataDir];
    const init = Bun.spawnSync([bin, "init", "--org", "acme", "--admin", "root", ...where], {
      env: { ...process.env, ...env },
    });
    expect(init.exitCode).toBe(0);
    const token = init.stdout.toString().trim().split("\n").at(-1)!;
    const auth = { authorization: `Bearer ${token}` };

    let { proc, url } = await serveBinary(bin, dataDir, env);
    const schema = {
      name: "schema",
      validator: "json_schema",
      config: { schema: { type: "object", required: ["n"] } },
    };
    const workflow = async (body: Record<string, unknown>) => {
      const r = await fetch(`${url}/api/v1/orgs/acme/workflows/`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ allowed_file_types: ["JSON"], ...body }),
      });
      expect(r.status).toBe(201);
    };
    await workflow({
      slug: "crash",
      name: "Crash",
      steps: [{ name: "syntax", validator: "syntax", config: {} }, schema],
    });
    // Only a JSON Schema step: the inline lane's, so a sync run here is written in its final state
    // by the thread that accepted it (with two threads, often an HTTP thread on its own connection).
    await workflow({ slug: "inline", name: "Inline", steps: [schema] });
    await workflow({ ...HOLD_WORKFLOW, name: "Hold" });
    // A few requests that cannot be answered before the kill, however fast the server is: they
    // wait for runs held by a gate that stays closed. So the kill always lands mid-burst.
    const gate = gates.gate();
    const unanswerable = Array.from({ length: 5 }, () =>
      fetch(`${url}/api/v1/orgs/acme/workflows/hold/runs/`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", prefer: "wait=60" },
        body: gate.doc(),
      }).then(
        (r) => r.status,
        () => 0,
      ),
    );

    if (threads > 1) {
      // The HTTP thread serves sync runs itself in this binary (asserted, not assumed): runs on
      // fresh connections until its counter says so.
      // (On PostgreSQL every series also carries the node's name.)
      const local = async () => {
        const text = await (await fetch(`${url}/metrics`, { headers: auth })).text();
        for (const m of text.matchAll(/^assay_http_thread_requests_total\{([^}]*)\} (\d+)$/gm))
          if (m[1]!.includes('path="local"') && m[1]!.includes('thread="1"')) return Number(m[2]);
        return 0;
      };
      for (let i = 0; (await local()) === 0; i++) {
        expect(i).toBeLessThan(200);
        const r = await fetch(`${url}/api/v1/orgs/acme/workflows/inline/runs/`, {
          method: "POST",
          headers: {
            ...auth,
            "content-type": "application/json",
            "x-filename": `warm-${i}.json`,
            connection: "close",
          },
          body: JSON.stringify({ n: i }),
        });
        expect(r.status).toBe(201);
      }
    }

    const N = 300;
    const acked = new Map<string, string>(); // filename → run id
    let answered = 0;
    let killed = false;
    // Odd: queued (202) on the two-step workflow; even: sync runs of the inline one (201).
    const sends = Array.from({ length: N }, (_, i) =>
      fetch(`${url}/api/v1/orgs/acme/workflows/${i % 2 ? "crash" : "inline"}/runs/`, {
        method: "POST",
        headers: {
          ...auth,
          "content-type": "application/json",
          "x-filename": `req-${i}.json`,
          ...(i % 2 ? { prefer: "respond-async" } : {}),
        },
        body: JSON.stringify({ n: i, pad: "x".repeat(512) }),
      })
        .then(async (r) => {
          if (r.status === 201 || r.status === 202)
            acked.set(`req-${i}.json`, ((await r.json()) as { id: string }).id);
          else throw new Error(`unexpected ${r.status}`);
        })
        .catch((e) => {
          if (!killed) throw e; // a failure is only acceptable once the server is gone
        })
        .finally(() => {
          answered++;
          if (answered === Math.floor(N / 3) && !killed) {
            killed = true;
            proc.kill("SIGKILL");
          }
        }),
    );
    await Promise.all(sends);
    await proc.exited;
    expect(killed).toBe(true);
    expect(acked.size).toBeGreaterThan(50);
    expect(await Promise.all(unanswerable)).toEqual([0, 0, 0, 0, 0]);

    gates.openAll();
    ({ proc, url } = await serveBinary(bin, dataDir, env));
    try {
      const deadline = Date.now() + 60000;
      let runs: { id: string; status: string; submission: { filename: string } }[] = [];
      for (;;) {
        runs = [];
        for (let page = 1; ; page++) {
          const r = (await (
            await fetch(`${url}/api/v1/orgs/acme/runs/?page_size=200&page=${page}`, { headers: auth })
          ).json()) as { results: typeof runs; next: string | null };
          runs.push(...r.results);
          if (!r.next) break;
        }
        if (runs.every((r) => !["queued", "running"].includes(r.status))) break;
        if (Date.now() > deadline) throw new Error("runs did not finish after restart");
        await Bun.sleep(50);
      }
      const byName = new Map<string, number>();
      for (const r of runs) byName.set(r.submission.filename, (byName.get(r.submission.filename) ?? 0) + 1);
      // none twice, nothing we did not send
      for (const [name, n] of byName) {
        expect(n).toBe(1);
        expect(name).toMatch(/^(req|warm)-\d+\.json$/);
      }
      // every acknowledged run exists, with its id, and finished well
      const byId = new Map(runs.map((r) => [r.id, r]));
      for (const [name, id] of acked) {
        const r = byId.get(id);
        expect(r?.submission.filename).toBe(name);
        expect(r?.status).toBe("succeeded");
      }
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  });
