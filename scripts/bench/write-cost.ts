// What the durable write of one sync run costs on SQLite (issue #26), measured on the store's own
// write (createFinal: the submission and the final run, as the inline lane writes them), in group
// commits of G runs as the batcher forms them under load. No checkpoint thread: the WAL only grows,
// so its growth over N runs is the bytes a run writes, and each WAL frame's page number, mapped to
// its B-tree with the dbstat table, says which tables and indexes a commit dirties. Then one
// TRUNCATE checkpoint of those frames, timed: the checkpoint's cost per run.
// Usage: bun scripts/bench/write-cost.ts [--runs N] [--groups 1,4,12,32] [--warm N] [--trees] [--sql 'schema variant']
import type { Database } from "bun:sqlite";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { DB_FILE, openDatabase } from "../../src/db/open.ts";
import { createSqliteDb } from "../../src/db/sqlite.ts";
import { now } from "../../src/db/util.ts";
import { uuidv7 } from "../../src/lib/uuid.ts";
import { createRunStore } from "../../src/runs/store.ts";
import { summarize } from "../../src/runs/summary.ts";
import type { RunStep } from "../../src/runs/types.ts";
import { WORKFLOWS, orderDocument } from "./fixtures.ts";
import { removeDir, tempDir } from "./server.ts";

export interface WriteCost {
  group: number;
  runs: number;
  /** Runs written before the measure (B-trees of some depth). */
  warm: number;
  walBytesPerRun: number;
  framesPerCommit: number;
  /** WAL frames per commit, by B-tree (table or index name). */
  framesByTree: Record<string, number>;
  /** CPU µs per run of the writes and commits (process.cpuUsage: the one thread, no checkpoint). */
  writeUsPerRun: number;
  /** Per B-tree after the runs: bytes of payload per row, rows per leaf page, overflow pages. */
  trees: { name: string; rows: number; payloadPerRow: number; rowsPerLeaf: number; overflowPages: number }[];
  checkpointUsPerRun: number;
  pageSize: number;
}

function seed(db: Database): { orgId: number; userId: number; workflowId: number } {
  const ts = new Date().toISOString();
  const userId = Number(
    db.prepare("INSERT INTO users (username, created_at) VALUES ('bench', ?)").run(ts).lastInsertRowid,
  );
  const orgId = Number(
    db.prepare("INSERT INTO orgs (slug, name, created_at) VALUES ('bench', 'Bench', ?)").run(ts)
      .lastInsertRowid,
  );
  const wf = WORKFLOWS.order;
  const workflowId = Number(
    db
      .prepare(
        "INSERT INTO workflows (org_id, slug, name, allowed_file_types, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(orgId, wf.slug, wf.name, JSON.stringify(wf.allowed_file_types), ts, ts).lastInsertRowid,
  );
  return { orgId, userId, workflowId };
}

/** Page numbers of the WAL's frames (24-byte frame headers after the 32-byte file header). */
function walPages(path: string, pageSize: number): number[] {
  const size = statSync(path).size;
  const fd = openSync(path, "r");
  const head = Buffer.alloc(4);
  const pages: number[] = [];
  try {
    for (let at = 32; at + 24 + pageSize <= size; at += 24 + pageSize) {
      readSync(fd, head, 0, 4, at);
      pages.push(head.readUInt32BE(0));
    }
  } finally {
    closeSync(fd);
  }
  return pages;
}

export async function measureWriteCost(
  group: number,
  runs: number,
  warm: number,
  /** SQL run after the migrations: a schema variant to compare (--sql). */
  variant = "",
): Promise<WriteCost> {
  const dir = tempDir("write-cost");
  try {
    const raw = openDatabase(dir);
    if (variant) raw.exec(variant);
    raw.exec("PRAGMA wal_autocheckpoint = 0");
    const ids = seed(raw);
    const store = createRunStore(createSqliteDb(raw));
    const bytes = new TextEncoder().encode(orderDocument());
    const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const wf = WORKFLOWS.order;
    const one = () => {
      const at = now();
      const steps: RunStep[] = [
        {
          step_id: 1,
          order: 1,
          name: wf.steps[0].name,
          validator: wf.steps[0].validator,
          status: "passed",
          duration_ms: 0,
          findings: [],
          error: null,
          truncated: false,
        },
      ];
      return store.createFinal(
        {
          id: uuidv7(),
          createdAt: at,
          orgId: ids.orgId,
          workflowId: ids.workflowId,
          workflowVersion: 1,
          steps,
          user: { id: ids.userId, username: "bench" },
          submission: {
            bytes,
            contentType: "application/json",
            charset: "utf-8",
            fileType: "JSON",
            filename: null,
            metadata: {},
            sha256,
          },
        },
        {
          status: "succeeded",
          steps,
          summary: summarize(steps),
          error: null,
          finishedAt: at,
          durationMs: 0,
          startedAt: at,
        },
      );
    };
    // The writes issued in one turn share one commit (src/runs/batch.ts).
    const commits = async (n: number) => {
      for (let done = 0; done < n; done += group)
        await Promise.all(Array.from({ length: Math.min(group, n - done) }, one));
    };
    await commits(warm); // B-trees of a realistic depth; the first pages allocated
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const pageSize = (raw.query("PRAGMA page_size").get() as { page_size: number }).page_size;
    const wal = join(dir, `${DB_FILE}-wal`);
    const t0 = process.cpuUsage();
    await commits(runs);
    const cpu = process.cpuUsage(t0);
    const writeMs = (cpu.user + cpu.system) / 1000;
    const walBytes = statSync(wal).size;
    const pages = walPages(wal, pageSize);
    const owner = new Map<number, string>();
    for (const r of raw.query("SELECT name, pageno FROM dbstat").all() as { name: string; pageno: number }[])
      owner.set(r.pageno, r.name);
    const nCommits = Math.ceil(runs / group);
    const framesByTree: Record<string, number> = {};
    for (const p of pages) {
      const name = owner.get(p) ?? "(free or overflow list)";
      framesByTree[name] = (framesByTree[name] ?? 0) + 1 / nCommits;
    }
    const trees = (
      raw
        .query(
          `SELECT name, sum(CASE WHEN pagetype = 'leaf' THEN ncell ELSE 0 END) AS rows,
                  sum(CASE WHEN pagetype = 'leaf' THEN 1 ELSE 0 END) AS leaves,
                  sum(payload) AS payload, sum(CASE WHEN pagetype = 'overflow' THEN 1 ELSE 0 END) AS overflow
             FROM dbstat WHERE name IN ('runs', 'submissions') OR name LIKE 'runs_%' OR name LIKE 'sqlite_autoindex_run%'
            GROUP BY name`,
        )
        .all() as { name: string; rows: number; leaves: number; payload: number; overflow: number }[]
    ).map((t) => ({
      name: t.name,
      rows: t.rows,
      payloadPerRow: t.rows ? t.payload / t.rows : 0,
      rowsPerLeaf: t.leaves ? t.rows / t.leaves : 0,
      overflowPages: t.overflow,
    }));
    const c0 = performance.now();
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const checkpointMs = performance.now() - c0;
    raw.close();
    return {
      group,
      runs,
      warm,
      walBytesPerRun: walBytes / runs,
      framesPerCommit: pages.length / nCommits,
      framesByTree,
      writeUsPerRun: (writeMs * 1000) / runs,
      trees,
      checkpointUsPerRun: (checkpointMs * 1000) / runs,
      pageSize,
    };
  } finally {
    removeDir(dir);
  }
}

export function describeWriteCost(c: WriteCost): string {
  const trees = Object.entries(c.framesByTree)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(", ");
  return `group ${c.group}: ${c.walBytesPerRun.toFixed(0)} WAL bytes/run, ${c.framesPerCommit.toFixed(1)} frames/commit (${trees}); write ${c.writeUsPerRun.toFixed(1)} µs/run, checkpoint ${c.checkpointUsPerRun.toFixed(1)} µs/run`;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const opt = (name: string, dflt: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1]! : dflt;
  };
  const runs = Number(opt("--runs", "6000"));
  const warm = Number(opt("--warm", "4000"));
  for (const g of opt("--groups", "1,4,12,32").split(",").map(Number)) {
    const c = await measureWriteCost(g, runs, warm, opt("--sql", ""));
    process.stdout.write(`${describeWriteCost(c)}\n`);
    if (args.includes("--trees"))
      for (const t of c.trees)
        process.stdout.write(
          `  ${t.name}: ${t.rows} rows, ${t.payloadPerRow.toFixed(0)} B payload/row, ${t.rowsPerLeaf.toFixed(1)} rows/leaf, ${t.overflowPages} overflow pages\n`,
        );
  }
}
