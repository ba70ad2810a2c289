// The run list on a big table: seeds N runs (default 1,000,000) into a temp data dir with
// prepared statements in one transaction, then times GET …/runs/'s query (the real store code)
// with each filter, first pages and deep ones. Numbers are in docs/limits.md.
//
//   bun scripts/list-bench.ts [runs]
//
// seedRuns is also used by test/list-performance.test.ts (200,000 runs, through HTTP).
import { SYSTEM } from "../src/audit/actor.ts";
import { type Db, all, run } from "../src/db/program.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeDatabase, openDatabase } from "../src/db/open.ts";
import { createSqliteDb } from "../src/db/sqlite.ts";
import { createOrgStore } from "../src/orgs/store.ts";
import { createRunStore } from "../src/runs/store.ts";
import type { RunFilters } from "../src/runs/types.ts";
import { createUserStore } from "../src/users/store.ts";
import { createWorkflowService } from "../src/workflows/service.ts";
import { createWorkflowStore } from "../src/workflows/store.ts";

export const SEED_STATUSES = ["succeeded", "failed", "error", "canceled", "timed_out"] as const;
/** Runs are spread one minute apart, ending now: 1,000,000 runs cover about two years. */
export const SEED_STEP_MS = 60_000;

export interface SeedOptions {
  orgId: number;
  workflowIds: number[];
  user: { id: number; username: string };
  count: number;
  /** Spacing of the runs (default SEED_STEP_MS). */
  stepMs?: number;
}

/**
 * Inserts `count` final runs (and their submissions) round-robin over the workflows, with
 * statuses spread evenly over SEED_STATUSES (so "failed" is one run in five), newest last.
 */
export async function seedRuns(db: Db, o: SeedOptions): Promise<void> {
  const steps = JSON.stringify([
    {
      step_id: 1,
      order: 1,
      name: "syntax",
      validator: "syntax",
      status: "passed",
      duration_ms: 1,
      findings: [],
      error: null,
    },
  ]);
  const summary = JSON.stringify({
    errors: 0,
    warnings: 0,
    infos: 0,
    steps_passed: 1,
    steps_failed: 0,
    steps_skipped: 0,
    truncated: false,
  });
  const sha = "0".repeat(64);
  const end = Date.now();
  const CHUNK = 500;
  for (let from = 0; from < o.count; from += CHUNK) {
    const to = Math.min(o.count, from + CHUNK);
    // Multi-row inserts (both dialects); the submissions' ids are matched back by created_at,
    // which is unique within a chunk (one minute apart).
    await db.tx(function* () {
      const step = o.stepMs ?? SEED_STEP_MS;
      const at = (i: number) => new Date(end - (o.count - i) * step).toISOString();
      const subParams: (string | number)[] = [];
      for (let i = from; i < to; i++) subParams.push(o.orgId, sha, at(i));
      const subs = yield* all<{ id: number; created_at: string }>(
        `INSERT INTO submissions (org_id, filename, content_type, charset, file_type, size, sha256, metadata, content, created_at) VALUES ${Array.from({ length: to - from }, () => "(?, 'data.json', 'application/json', 'utf-8', 'JSON', 2, ?, '{}', NULL, ?)").join(", ")} RETURNING id, created_at`,
        ...subParams,
      );
      const idAt = new Map(subs.map((r) => [r.created_at, r.id]));
      const runParams: (string | number)[] = [];
      for (let i = from; i < to; i++) {
        const ts = at(i);
        // A UUIDv7 shape that sorts like created_at, as real run ids do.
        const hex = (end - (o.count - i) * step).toString(16).padStart(12, "0");
        const runId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8${(o.orgId % 0x1000).toString(16).padStart(3, "0")}-${i.toString(16).padStart(12, "0")}`;
        // A multiplicative hash, so that statuses and workflows combine (not both i mod 5).
        const status = SEED_STATUSES[(Math.imul(i, 0x9e3779b1) >>> 0) % SEED_STATUSES.length]!;
        runParams.push(
          runId,
          o.orgId,
          o.workflowIds[i % o.workflowIds.length]!,
          idAt.get(ts)!,
          status,
          summary,
          steps,
          o.user.id,
          o.user.username,
          ts,
          ts,
          ts,
        );
      }
      yield* run(
        `INSERT INTO runs (id, org_id, workflow_id, workflow_version, submission_id, status, summary, steps, attempts, created_by, created_by_name, created_at, started_at, finished_at, duration_ms) VALUES ${Array.from({ length: to - from }, () => "(?, ?, ?, 1, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, 3)").join(", ")}`,
        ...runParams,
      );
    });
  }
}

/** The list queries worth timing, as (label, filters, page offset) for a seeded org. */
export function listCases(count: number, workflowId: number): [string, RunFilters, number][] {
  const monthAgo = new Date(Date.now() - 30 * 24 * 3600_000).toISOString();
  const twoMonthsAgo = new Date(Date.now() - 60 * 24 * 3600_000).toISOString();
  return [
    ["no filter, page 1", {}, 0],
    ["status=failed, page 1", { status: "failed" }, 0],
    ["workflow=<one of 20>, page 1", { workflowId }, 0],
    ["created in a 30-day range, page 1", { createdAfter: twoMonthsAgo, createdBefore: monthAgo }, 0],
    ["workflow + status, page 1", { workflowId, status: "failed" }, 0],
    ["no filter, page 200 (offset 9,950)", {}, 9_950],
    ["no filter, last page", {}, Math.max(0, count - 50)],
  ];
}

async function main() {
  const count = Number(process.argv[2] ?? 1_000_000);
  const dir = mkdtempSync(join(tmpdir(), "assay-list-bench-"));
  const db = openDatabase(dir);
  const sdb = createSqliteDb(db);
  try {
    const org = await createOrgStore(sdb).create("bench", "Bench", SYSTEM);
    const user = await createUserStore(sdb).create({ username: "bench" }, SYSTEM);
    const workflows = createWorkflowService(createWorkflowStore(sdb));
    const workflowIds: number[] = [];
    for (let i = 0; i < 20; i++) {
      const { workflow } = await workflows.create(
        org.id,
        {
          slug: `wf-${i}`,
          name: `wf-${i}`,
          allowed_file_types: ["JSON"],
          steps: [{ name: "syntax", validator: "syntax", config: {} }],
        },
        SYSTEM,
      );
      workflowIds.push(workflow.id);
    }
    // Seeding speed only: a bigger page cache while the indexes grow (the timed queries below run
    // after it is set back to the server's).
    db.exec("PRAGMA cache_size = -1000000");
    let t0 = performance.now();
    await seedRuns(sdb, { orgId: org.id, workflowIds, user, count });
    db.exec("PRAGMA cache_size = -32000");
    console.log(
      `seeded ${count.toLocaleString("en")} runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const runs = createRunStore(sdb);
    console.log("query (page_size 50)                     median ms   count");
    for (const [label, filters, offset] of listCases(count, workflowIds[3]!)) {
      const times: number[] = [];
      let n = 0;
      for (let i = 0; i < 5; i++) {
        t0 = performance.now();
        n = (await runs.list(org.id, filters, 50, offset)).count;
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      console.log(`${label.padEnd(40)} ${times[2]!.toFixed(1).padStart(9)}   ${n}`);
    }
  } finally {
    closeDatabase(db);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
