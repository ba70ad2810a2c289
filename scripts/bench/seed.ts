// A data dir holding N finished runs, for measure 5, written straight into a copy of a migrated
// database (minutes over HTTP, seconds this way): the runs indexes are dropped, the rows
// inserted in one transaction with prepared statements, and the same indexes created again.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { WORKFLOWS } from "./fixtures.ts";
import type { Machine } from "./machine.ts";
import { api, initDataDir, startAssay } from "./server.ts";

const DAY_MS = 86_400_000;

/** An id shaped like the server's UUIDv7s (time first, so rows append in key order). */
function runId(ms: number, n: number): string {
  const t = ms.toString(16).padStart(12, "0");
  const c = n.toString(16).padStart(12, "0");
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${c.slice(0, 3)}-8${c.slice(3, 6)}-${c.slice(6)}000000`;
}

export async function seedRuns(m: Machine, dataDir: string, n: number): Promise<number> {
  const token = initDataDir(dataDir, "bench");
  const s = await startAssay({ dataDir, machine: m });
  try {
    await api(s.url, token, "POST", "/api/v1/orgs/bench/workflows/", WORKFLOWS.order);
  } finally {
    await s.stop();
  }
  const started = performance.now();
  const db = new Database(join(dataDir, "assay.db"));
  try {
    const wf = db.query("SELECT id, org_id, version FROM workflows").get() as {
      id: number;
      org_id: number;
      version: number;
    };
    const user = db.query("SELECT id, username FROM users").get() as { id: number; username: string };
    const step = (db.query("SELECT id FROM steps").get() as { id: number }).id;
    const indexes = db
      .query(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs' AND sql IS NOT NULL",
      )
      .all() as { name: string; sql: string }[];
    db.exec("PRAGMA journal_mode = DELETE");
    db.exec("PRAGMA synchronous = OFF");
    for (const ix of indexes) db.exec(`DROP INDEX ${ix.name}`);
    const sub = db.prepare(
      "INSERT INTO submissions (id, org_id, filename, content_type, charset, file_type, size, sha256, metadata, content, created_at) VALUES (?, ?, NULL, 'application/json', 'utf-8', 'JSON', ?, ?, '{}', ?, ?)",
    );
    const run = db.prepare(
      "INSERT INTO runs (id, org_id, workflow_id, workflow_version, submission_id, status, summary, steps, attempts, created_by, created_by_name, created_at, started_at, finished_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, 3)",
    );
    const base = (db.query("SELECT coalesce(max(id), 0) AS n FROM submissions").get() as { n: number }).n;
    const content = Buffer.from('{"id":"ord-000001","status":"paid","items":[]}');
    const sha = "0".repeat(64);
    const first = Date.now() - 30 * DAY_MS;
    const every = (30 * DAY_MS) / n;
    db.transaction(() => {
      for (let i = 0; i < n; i++) {
        const ms = Math.floor(first + i * every);
        const at = new Date(ms).toISOString();
        const done = new Date(ms + 3).toISOString();
        const failed = i % 20 === 0;
        const steps = `[{"step_id":${step},"order":1,"name":"order schema","validator":"json_schema","status":"${failed ? "failed" : "passed"}","duration_ms":1,"findings":${failed ? '[{"severity":"error","code":"json_schema.required","message":"missing total","path":"","line":1,"column":1,"rule":"required"}]' : "[]"},"error":null}]`;
        const summary = `{"errors":${failed ? 1 : 0},"warnings":0,"infos":0,"steps_passed":${failed ? 0 : 1},"steps_failed":${failed ? 1 : 0},"steps_skipped":0,"truncated":false}`;
        sub.run(base + i + 1, wf.org_id, content.byteLength, sha, content, at);
        run.run(
          runId(ms, i),
          wf.org_id,
          wf.id,
          wf.version,
          base + i + 1,
          failed ? "failed" : "succeeded",
          summary,
          steps,
          user.id,
          user.username,
          at,
          at,
          done,
        );
      }
    })();
    for (const ix of indexes) db.exec(ix.sql);
    db.exec("PRAGMA journal_mode = WAL");
  } finally {
    db.close();
  }
  return (performance.now() - started) / 1000;
}
