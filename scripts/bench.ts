// `npm run bench` — how fast Assay is, as ratios against baselines measured in the same run on
// the same machine (so the figures hold on a noisy 2-core box). Builds dist/assay, then:
//   1 sync runs over HTTP vs a bare Bun.serve (wrk, 16 connections, load and server pinned apart)
//   2 async intake and drain (Prefer: respond-async)   3 10 MiB JSON / XML / CSV documents
//   4 peak RSS during 1 and 3                           5 start to the first /healthz 200
//   6 Schematron: EN 16931 rules on a ~100 KB UBL invoice, documents/s
//   7 the same sync runs and async intake/drain on PostgreSQL (a throwaway cluster) vs SQLite
//   8 /healthz p99 while 10 viewers list runs of 100k findings, and while 4 clients send 24 MB
//     envelopes (issue #19: no request may hold the HTTP thread)
//   9 async drain with 1, 2 and 3 nodes on one PostgreSQL database, and the database work per run
//   10 the durable write of a sync run: WAL bytes and frames per run in group commits of 12, the
//     B-trees each commit dirties, the checkpoint's cost (issue #26; scripts/bench/write-cost.ts)
//   11 every core: sync runs with the writer thread, and with N HTTP threads too, against all on
//     one thread, unpinned, CPU per run and the projection to more cores (issue #26;
//     scripts/bench/threads.ts)
// Full run: prints the table and rewrites the results block of docs/benchmarks.md (< 10 min).
// --quick: tiny versions of each measure, no thresholds, nothing written (CI smoke, < 1 min).
// Other flags: --only http,async,large,start,schematron,pg,stalls,nodes,write,threads · --workers N
// · --threads N (measure 11's HTTP threads; default: the cores, at least 2) · --unpinned
// · --no-build · --no-write · --strict
// (exit 1 when a target is missed). Needs Linux (/proc), wrk (apt-get install -y wrk), taskset.
import { resolve } from "node:path";
import { measureAsync } from "./bench/async.ts";
import { measureHttp } from "./bench/http.ts";
import { measureLarge } from "./bench/large.ts";
import { measureSchematron } from "./bench/schematron.ts";
import { WRK_HINT, describeMachine, machineLine } from "./bench/machine.ts";
import { type Results, details, markdownTable, rows, textTable, writeDoc } from "./bench/report.ts";
import { pgBinDir } from "../test/helpers/pg-cluster.ts";
import { measureNodes } from "./bench/nodes.ts";
import { measurePostgres } from "./bench/postgres.ts";
import { measureStart } from "./bench/start.ts";
import { measureEnvelopeStall, measureListStall } from "./bench/stalls.ts";
import { measureThreads } from "./bench/threads.ts";
import { measureWriteCost } from "./bench/write-cost.ts";

const MEASURES = [
  "http",
  "async",
  "large",
  "start",
  "schematron",
  "pg",
  "stalls",
  "nodes",
  "write",
  "threads",
] as const;
type Measure = (typeof MEASURES)[number];

function parseArgs(argv: string[]) {
  const o = {
    quick: false,
    only: [...MEASURES] as Measure[],
    workers: 0,
    threads: 0,
    unpinned: false,
    build: true,
    write: true,
    strict: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--quick") o.quick = true;
    else if (a === "--no-build") o.build = false;
    else if (a === "--no-write") o.write = false;
    else if (a === "--strict") o.strict = true;
    else if (a === "--only") o.only = (argv[++i] ?? "").split(",") as Measure[];
    else if (a === "--workers") o.workers = Number(argv[++i]);
    else if (a === "--threads") o.threads = Number(argv[++i]);
    // Every process on every core (issue #26: the server on 2 cores, wrk unpinned); nothing is
    // written to docs/benchmarks.md from such a run.
    else if (a === "--unpinned") o.unpinned = true;
    else throw new Error(`unknown option ${a}`);
  }
  for (const m of o.only) if (!MEASURES.includes(m)) throw new Error(`--only takes ${MEASURES.join(",")}`);
  if (!(Number.isInteger(o.workers) && o.workers >= 0)) throw new Error("--workers takes a whole number");
  if (!(Number.isInteger(o.threads) && o.threads >= 0)) throw new Error("--threads takes a whole number");
  return o;
}

const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

async function main(): Promise<number> {
  const opts = parseArgs(process.argv.slice(2));
  if (process.platform !== "linux") {
    log("needs Linux (peak RSS is read from /proc)");
    return 1;
  }
  const m = describeMachine();
  if (opts.workers) m.workers = opts.workers;
  if (opts.unpinned) {
    m.pinned = false;
    opts.write = false;
  }
  const results: Results = { skipped: [] };
  if (!m.wrk && opts.only.includes("http")) {
    log(WRK_HINT);
    if (!opts.quick) return 1;
    results.skipped.push("1 (wrk missing)");
    opts.only = opts.only.filter((x) => x !== "http");
  }
  if (!pgBinDir() && (opts.only.includes("pg") || opts.only.includes("nodes"))) {
    log("PostgreSQL is not installed (apt-get install -y postgresql): measures 7 and 8 skipped");
    results.skipped.push("7, 8 (PostgreSQL missing)");
    opts.only = opts.only.filter((x) => x !== "pg" && x !== "nodes");
  }
  if (opts.build) {
    log("building dist/assay");
    const b = Bun.spawnSync([process.execPath, "scripts/build.ts"], { stdout: "inherit", stderr: "inherit" });
    if (b.exitCode !== 0) return 1;
  }
  log(machineLine(m));
  const q = opts.quick;
  const t0 = performance.now();
  const step = async <T>(name: Measure, label: string, fn: () => Promise<T>): Promise<T | undefined> => {
    if (!opts.only.includes(name)) return undefined;
    log(label);
    const t = performance.now();
    const r = await fn();
    log(`${label}: ${((performance.now() - t) / 1000).toFixed(0)} s`);
    return r;
  };
  // Measure 3 first: after measure 1's ~90 s of both cores at full load this VM ran slower for a
  // while, the server's worker more than the bench's own JSON.parse baseline (10 MiB step 154–164
  // ms alone, 256–271 ms right after measure 1, the baseline 79–129 ms), so the order biased it.
  results.large = await step("large", "3 large documents", () =>
    measureLarge(m, q ? { bytes: 2 ** 20, repeats: 1 } : { bytes: 10 * 2 ** 20, repeats: 3 }),
  );
  results.http = await step("http", "1 sync runs over HTTP", () =>
    measureHttp(
      m,
      q
        ? { rounds: 1, seconds: 2, warmupSeconds: 1, connections: 16, compilePeer: false }
        : // The JIT keeps compiling for ~8–10 s of this load (its threads took 13–25 % of the
          // server's core in the first 4 s, ~0 after 10 s, measured per second): the rounds
          // measure the steady state after it.
          { rounds: 5, seconds: 6, warmupSeconds: 12, connections: 16 },
    ),
  );
  results.async = await step("async", "2 async intake and drain", () =>
    measureAsync(m, { runs: q ? 500 : 10_000, connections: 16 }),
  );
  results.start = await step("start", "5 start", () =>
    measureStart(m, q ? { runs: 10_000, repeats: 1 } : { runs: 1_000_000, repeats: 3 }),
  );
  results.schematron = await step("schematron", "6 Schematron", () =>
    measureSchematron({ bytes: 100 * 1024, docs: q ? 1 : 10 }),
  );
  results.pg = await step("pg", "7 PostgreSQL", () =>
    measurePostgres(
      m,
      q
        ? { rounds: 1, seconds: 2, warmupSeconds: 1, connections: 16, runs: 300 }
        : { rounds: 3, seconds: 6, warmupSeconds: 10, connections: 16, runs: 5_000 },
    ),
  );
  const list = await step("stalls", "8a /healthz while viewers list runs of many findings", () =>
    measureListStall(
      m,
      q
        ? { runs: 3, findingsPerStep: 1000, viewers: 10, seconds: 3 }
        : { runs: 50, findingsPerStep: 10_000, viewers: 10, seconds: 20 },
    ),
  );
  const envelopes = await step("stalls", "8b /healthz while clients send 24 MB envelopes", () =>
    measureEnvelopeStall(
      m,
      q ? { clients: 4, bytes: 2e6, seconds: 3 } : { clients: 4, bytes: 24e6, seconds: 20 },
    ),
  );
  if (list && envelopes) results.stalls = { list, envelopes };
  results.nodes = await step("nodes", "9 several nodes", () =>
    measureNodes(m, q ? { runs: 300, counts: [1, 2] } : { runs: 5_000, counts: [1, 2, 3] }),
  );
  // Group commits of 12: the size the batcher forms under measure 1's 16 connections.
  results.write = await step("write", "10 the durable write of a sync run", () =>
    q ? measureWriteCost(12, 600, 400) : measureWriteCost(12, 12_000, 8_000),
  );
  // Every core: the servers and wrk unpinned whatever --unpinned says (issue #26).
  results.threads = await step(
    "threads",
    "11 every core: N HTTP threads and the writer thread against one thread",
    () =>
      measureThreads(m, {
        threads: opts.threads || Math.max(2, m.cores),
        ...(q
          ? { rounds: 1, seconds: 2, warmupSeconds: 1, connections: 16, highConnections: 64 }
          : { rounds: 3, seconds: 6, warmupSeconds: 12, connections: 16, highConnections: 64 }),
      }),
  );
  const judge = !q;
  const table = rows(results, judge);
  const minutes = (performance.now() - t0) / 60_000;
  process.stdout.write(`\n${machineLine(m)}\n\n${textTable(table)}\n\n${details(results)}\n`);
  process.stdout.write(`\n${q ? "quick run (no thresholds)" : "full run"} in ${minutes.toFixed(1)} min\n`);
  const complete =
    opts.only.length === MEASURES.length ||
    (results.skipped.length > 0 && opts.only.length === MEASURES.length - results.skipped.length);
  if (!q && opts.write && complete) {
    const when = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    writeDoc(
      resolve("docs/benchmarks.md"),
      `Latest full run: ${when}, ${minutes.toFixed(1)} min.\n\nMachine: ${machineLine(m)}.\n\n${markdownTable(table)}\n\n${details(results)}`,
    );
    log("wrote docs/benchmarks.md");
  }
  return opts.strict && table.some((r) => r.ok === false || r.unreliable) ? 1 : 0;
}

process.exit(await main());
