// Measure 1's floor: the least work a sync run needs, hand-written on Assay's own stack, so the
// bench can tell what the stack costs from what Assay's features cost. Per request: the bearer
// token's SHA-256 compared in constant time with a stored digest; the body read and decoded as
// UTF-8; JSON.parse and the same compiled JSON Schema check as Assay's inline lane; the body's
// SHA-256 and a UUIDv7; the submission and the run inserted with Assay's statements on Assay's
// schema (migrations), in Assay's group commit, with Assay's checkpoint thread; the 201 only
// after the commit, with the run's JSON as Assay shapes it. Nothing else: no router, no roles,
// limits, metrics, webhooks, caches or intake modes.
// Usage: FLOOR_TOKEN=… bun scripts/bench/floor-server.ts <data-dir> (prints the URL it listens on).
import { timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import { startCheckpointer } from "../../src/db/checkpointer.ts";
import { DB_FILE, closeDatabase, openDatabase } from "../../src/db/open.ts";
import { uuidv7 } from "../../src/lib/uuid.ts";
import { value } from "../../src/db/program.ts";
import { createSqliteDb } from "../../src/db/sqlite.ts";
import { createWriteBatcher } from "../../src/runs/batch.ts";
import { presentRun } from "../../src/runs/present.ts";
import { summarize } from "../../src/runs/summary.ts";
import type { Run, RunStep } from "../../src/runs/types.ts";
import { compileJsonSchemaPassCheck } from "../../src/validators/json-schema/index.ts";
import { WORKFLOWS } from "./fixtures.ts";

const dataDir = process.argv[2];
const token = process.env.FLOOR_TOKEN;
if (!dataDir || !token) throw new Error("usage: FLOOR_TOKEN=… bun floor-server.ts <data-dir>");

const sha256 = (data: string | Uint8Array) => new Bun.CryptoHasher("sha256").update(data).digest();
const tokenDigest = sha256(token);
const db = openDatabase(dataDir);
const quiet = { debug() {}, info() {}, warn: console.warn, error: console.error };
const checkpointer = await startCheckpointer(
  db,
  join(dataDir, DB_FILE),
  new URL("../../src/db/checkpoint-worker.ts", import.meta.url),
  quiet,
);

// The rows the run's foreign keys point at.
const ts0 = new Date().toISOString();
const userId = Number(
  db.prepare("INSERT INTO users (username, created_at) VALUES ('bench', ?)").run(ts0).lastInsertRowid,
);
const orgId = Number(
  db.prepare("INSERT INTO orgs (slug, name, created_at) VALUES ('bench', 'Bench', ?)").run(ts0)
    .lastInsertRowid,
);
const wf = WORKFLOWS.order;
const workflowId = Number(
  db
    .prepare(
      "INSERT INTO workflows (org_id, slug, name, allowed_file_types, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .run(orgId, wf.slug, wf.name, JSON.stringify(wf.allowed_file_types), ts0, ts0).lastInsertRowid,
);
const check = compileJsonSchemaPassCheck(wf.steps[0].config);

const insertSubmission = db.prepare(
  "INSERT INTO submissions (org_id, filename, content_type, charset, file_type, size, sha256, metadata, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
);
const insertRun = db.prepare(
  "INSERT INTO runs (id, org_id, workflow_id, workflow_version, submission_id, status, steps, created_by, created_by_name, created_at, attempts, started_at, summary, error, finished_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)",
);
const batch = createWriteBatcher(createSqliteDb(db));
const json = { "content-type": "application/json" };
const problem = (status: number, code: string) => Response.json({ code }, { status });

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request): Promise<Response> {
    const m = /^bearer +(\S+) *$/i.exec(request.headers.get("authorization") ?? "");
    const presented = m ? sha256(m[1]!) : null;
    if (!presented || !timingSafeEqual(presented, tokenDigest))
      return problem(401, "authentication_required");
    const bytes = await request.bytes();
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      return problem(400, "invalid_request");
    }
    const started = new Date();
    // The bench sends only valid documents: a failed check means this floor is broken.
    if (!check({ bytes, text, fileType: "JSON", filename: null })) return problem(500, "check_failed");
    const finished = new Date();
    const id = uuidv7();
    const digest = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const at = started.toISOString();
    const end = finished.toISOString();
    const duration = finished.getTime() - started.getTime();
    const steps: RunStep[] = [
      {
        step_id: 1,
        order: 1,
        name: wf.steps[0].name,
        validator: wf.steps[0].validator,
        status: "passed",
        duration_ms: duration,
        findings: [],
        error: null,
        truncated: false,
      },
    ];
    const summary = summarize(steps);
    const sid = await batch.write(function* () {
      const s = insertSubmission.run(
        orgId,
        null,
        "application/json",
        "utf-8",
        "JSON",
        bytes.byteLength,
        digest,
        "{}",
        bytes,
        at,
      );
      const sid = Number(s.lastInsertRowid);
      insertRun.run(
        id,
        orgId,
        workflowId,
        1,
        sid,
        "succeeded",
        JSON.stringify(steps),
        userId,
        "bench",
        at,
        at,
        JSON.stringify(summary),
        null,
        end,
        duration,
      );
      yield* value(null);
      return sid;
    });
    const run: Run = {
      id,
      org_id: orgId,
      workflow_id: workflowId,
      workflow_slug: wf.slug,
      workflow_version: 1,
      submission: {
        id: sid,
        filename: null,
        content_type: "application/json",
        charset: "utf-8",
        file_type: "JSON",
        size: bytes.byteLength,
        sha256: digest,
        metadata: {},
        created_at: at,
        purged_at: null,
      },
      status: "succeeded",
      summary,
      steps,
      error: null,
      attempts: 1,
      created_by: { id: userId, username: "bench" },
      created_at: at,
      started_at: at,
      finished_at: end,
      duration_ms: duration,
    };
    return new Response(JSON.stringify(presentRun(origin, "bench", run)), { status: 201, headers: json });
  },
});
const origin: string = `http://127.0.0.1:${server.port}`;
process.stdout.write(`listening on ${origin}\n`);
process.on("SIGTERM", async () => {
  server.stop(true);
  await checkpointer.stop();
  closeDatabase(db);
  checkpointer.closeFile();
  process.exit(0);
});
