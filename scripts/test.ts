// `npm test`: the whole suite on SQLite, then the API suite (test/*.test.ts, each file a real
// server) again on PostgreSQL — a throwaway cluster the tests start themselves
// (test/helpers/pg-cluster.ts). The same files, parameterized by ASSAY_TEST_DATABASE, not copies.
// Without PostgreSQL installed the second pass is skipped with a note, except under CI=true,
// where it is required. Then the files about runs and webhooks once more on SQLite with the writer
// thread on (ASSAY_WRITER_THREAD, off by default): the path of a final sync run's rows differs
// there (src/runs/final-rows.ts, src/db/writer.ts). Ends with the passes' totals in bun's own
// format.
//
// The PostgreSQL pass runs beside the SQLite ones, not after them: a test process spends most of
// its time waiting (servers, child processes, timers; a pass alone kept this 2-core machine 60–
// 70% idle), and no test may depend on an idle machine (.ci/slow-tests). The SQLite passes print
// as they go; the PostgreSQL pass's report is held and printed whole when it ends.
// ASSAY_TEST_SERIAL=1 runs the passes one after another.
//
//   npm test                       every pass
//   npm test -- test/runs-flow.test.ts   one file, every pass it belongs to
//   ASSAY_TEST_ONLY=sqlite npm test      one pass (sqlite | postgres | writer)
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pgBinDir } from "../test/helpers/pg-cluster.ts";

const root = join(import.meta.dir, "..");
const args = process.argv.slice(2);
const only = process.env.ASSAY_TEST_ONLY;

interface Tally {
  pass: number;
  fail: number;
  skip: number;
  code: number;
}

/** One `bun test` process; its report echoed as it comes (`live`) or held and returned. */
async function pass(
  name: string,
  files: string[],
  env: Record<string, string>,
  live: boolean,
): Promise<Tally & { held: string }> {
  const heading = `\n=== ${name} ===\n`;
  if (live) process.stdout.write(heading);
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...files], {
    cwd: root,
    env: { ...process.env, ...env },
    stdout: live ? "inherit" : "pipe",
    stderr: "pipe",
  });
  // bun test writes its report (and the totals) to stderr: echo it and keep the totals.
  let tail = "";
  let held = live ? "" : heading;
  const decoder = new TextDecoder();
  const out = live ? null : new Response(proc.stdout as ReadableStream).text();
  const reader = proc.stderr.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const text = decoder.decode(value, { stream: true });
    if (live) process.stderr.write(text);
    else held += text;
    tail = (tail + text).slice(-4000);
  }
  const code = await proc.exited;
  if (out) held += await out;
  const num = (re: RegExp) => Number(re.exec(tail)?.[1] ?? 0);
  return {
    pass: num(/^ *(\d+) pass$/m),
    fail: num(/^ *(\d+) fail$/m),
    skip: num(/^ *(\d+) skip$/m),
    code,
    held,
  };
}

/** The API suite: every top-level test file (each starts a real server). */
function apiFiles(): string[] {
  return readdirSync(join(root, "test"))
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/${f}`);
}

/** The files the writer thread's pass runs: those that write runs and their webhook deliveries. */
const WRITER_FILES =
  /^test\/(runs-|direct-runs|inline-runs|final-rows|run-response|http-threads-lane|webhooks)[^/]*\.test\.ts$/;

const serial = process.env.ASSAY_TEST_SERIAL === "1";

/** The SQLite pass, then the writer thread's: printed as they go. */
async function sqliteLane(): Promise<Tally[]> {
  const out: Tally[] = [];
  if (!only || only === "sqlite")
    out.push(await pass("SQLite", args, { ASSAY_TEST_DATABASE: "sqlite" }, true));
  if (!only || only === "writer") {
    const files = (args.length ? args : apiFiles()).filter((a) => WRITER_FILES.test(a) || a.startsWith("-"));
    if (files.some((f) => !f.startsWith("-")))
      out.push(
        await pass(
          "SQLite, the writer thread on",
          files,
          { ASSAY_TEST_DATABASE: "sqlite", ASSAY_TEST_WRITER_THREAD: "on" },
          true,
        ),
      );
  }
  return out;
}

/** The PostgreSQL pass: held and printed after the SQLite lane unless it runs alone. */
async function postgresLane(live: boolean): Promise<(Tally & { held: string })[]> {
  if (only && only !== "postgres") return [];
  if (pgBinDir()) {
    const files = args.length
      ? args.filter((a) => /^test\/[^/]+\.test\.ts$/.test(a) || a.startsWith("-"))
      : apiFiles();
    if (files.some((f) => !f.startsWith("-")) || !args.length)
      return [await pass("PostgreSQL", files, { ASSAY_TEST_DATABASE: "postgres" }, live)];
  } else if (process.env.CI === "true") {
    process.stderr.write("PostgreSQL is required under CI=true (apt-get install -y postgresql)\n");
    return [{ pass: 0, fail: 1, skip: 0, code: 1, held: "" }];
  } else {
    process.stderr.write(
      "\nPostgreSQL is not installed: the PostgreSQL pass is skipped (apt-get install -y postgresql; see README).\n",
    );
  }
  return [];
}

const results: Tally[] = [];
if (serial || only) {
  results.push(...(await sqliteLane()), ...(await postgresLane(true)));
} else {
  const pg = postgresLane(false);
  results.push(...(await sqliteLane()));
  const held = await pg;
  for (const r of held) process.stderr.write(r.held);
  results.push(...held);
}

const total = results.reduce(
  (a, r) => ({ pass: a.pass + r.pass, fail: a.fail + r.fail, skip: a.skip + r.skip, code: a.code || r.code }),
  { pass: 0, fail: 0, skip: 0, code: 0 },
);
// Totals of both passes, in bun's own format (the last such lines: .ci/run reads them). Awaited,
// and no process.exit(): it dropped what the pipe had not taken yet — all but the first 64 KiB of
// the PostgreSQL report held above, and these totals, so .ci/run read the writer pass's count.
await new Promise<void>((done) =>
  process.stderr.write(`\nAll passes:\n ${total.pass} pass\n ${total.skip} skip\n ${total.fail} fail\n`, () =>
    done(),
  ),
);
process.exitCode = total.code || (total.fail ? 1 : 0);
