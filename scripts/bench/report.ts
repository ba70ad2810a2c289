// The results table (terminal and markdown) and docs/benchmarks.md: the generated part sits
// between two markers, so the hand-written notes around it survive each full run.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { AsyncResult } from "./async.ts";
import type { HttpResult, Side } from "./http.ts";
import type { LargeResult } from "./large.ts";
import type { NodesResult } from "./nodes.ts";
import type { PgResult } from "./postgres.ts";
import type { SchematronResult } from "./schematron.ts";
import type { StartResult } from "./start.ts";
import { type ThreadsResult, project } from "./threads.ts";
import { type WriteCost, describeWriteCost } from "./write-cost.ts";
import type { StallResult } from "./stalls.ts";

export interface Results {
  http?: HttpResult;
  async?: AsyncResult;
  large?: LargeResult;
  start?: StartResult;
  pg?: PgResult;
  nodes?: NodesResult;
  schematron?: SchematronResult;
  stalls?: StallResult;
  write?: WriteCost;
  threads?: ThreadsResult;
  skipped: string[];
}

export interface Row {
  measure: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
  /** true met, false missed, null: no target (or a quick run, which judges nothing). */
  ok: boolean | null;
  /** The host's speed changed during the measure: whatever ok says, nothing was shown. */
  unreliable?: boolean;
}

/**
 * Largest ratio between the fastest and the slowest baseline round of measure 1 for which the
 * rounds measured one machine. Calm runs stay within 1.1–1.3×; runs where the host slowed this VM
 * for minutes ranged 3.6× (19,824–72,381 and 9,610–34,416 req/s), and the bare server loses more
 * than Assay when that happens, so the ratio rose to 0.17 with nothing changed (docs/benchmarks.md).
 */
export const MAX_BASELINE_SPREAD = 1.5;

/** Fastest over slowest baseline round of measure 1. */
export function baselineSpread(h: HttpResult): number {
  const rps = h.baseline.rounds.map((r) => r.rps);
  return Math.max(...rps) / Math.min(...rps);
}

const MiB = 2 ** 20;
const n0 = (x: number) => Math.round(x).toLocaleString("en-US");
/** Small ratios keep a third decimal, or 0.010 and 0.017 would both read 0.01. */
const f2 = (x: number) => x.toFixed(x < 0.1 ? 3 : 2);
const f1 = (x: number) => x.toFixed(1);
const ms = (x: number) => (x >= 100 ? `${x.toFixed(0)} ms` : `${x.toFixed(1)} ms`);
const mib = (b: number) => `${(b / MiB).toFixed(0)} MiB`;

export function rows(r: Results, judge: boolean): Row[] {
  const out: Row[] = [];
  const row = (
    measure: string,
    value: string,
    baseline: string,
    ratio: string,
    target: string,
    ok?: boolean,
    unreliable = false,
  ) =>
    out.push({
      measure,
      value,
      baseline,
      ratio,
      target,
      ok: judge && ok !== undefined ? ok : null,
      ...(judge && unreliable ? { unreliable: true } : {}),
    });
  if (r.http) {
    const h = r.http;
    const unsteady = baselineSpread(h) > MAX_BASELINE_SPREAD;
    row(
      "1 sync runs over HTTP, req/s",
      n0(h.assay.rps),
      n0(h.baseline.rps),
      f2(h.ratio),
      "≥ 0.20 (ship ≥ 0.15)",
      h.ratio >= 0.2,
      unsteady,
    );
    row(
      "1 floor: the same work hand-written, req/s",
      n0(h.floor.rps),
      n0(h.baseline.rps),
      f2(h.floor.rps / h.baseline.rps),
      "— (reference)",
    );
    row(
      "1 Assay ÷ floor, req/s",
      "",
      "",
      f2(h.assay.rps / h.floor.rps),
      "≥ 0.95",
      h.assay.rps / h.floor.rps >= 0.95,
      unsteady,
    );
    if (h.peer) {
      row(
        "1 peer: Fastify + Ajv + better-sqlite3 (Node), req/s",
        n0(h.peer.rps),
        n0(h.baseline.rps),
        f2(h.peer.rps / h.baseline.rps),
        "— (reference)",
      );
      row(
        "1 Assay ÷ peer, req/s",
        "",
        "",
        f2(h.assay.rps / h.peer.rps),
        "≥ 2",
        h.assay.rps / h.peer.rps >= 2,
        unsteady,
      );
    }
    const cpu = (s: { cpuUsPerRequest: number }) =>
      Number.isFinite(s.cpuUsPerRequest) ? `${s.cpuUsPerRequest.toFixed(0)} µs` : "—";
    row(
      `1 CPU per run (all threads): Assay · floor${h.peer ? " · peer" : ""}`,
      [h.assay, h.floor, ...(h.peer ? [h.peer] : [])].map(cpu).join(" · "),
      `bare ${cpu(h.baseline)}`,
      "",
      "—",
    );
    row(
      "1 sync runs, p50 / p99",
      `${ms(h.assay.p50Ms)} / ${ms(h.assay.p99Ms)}`,
      `${ms(h.baseline.p50Ms)} / ${ms(h.baseline.p99Ms)}`,
      "",
      "p99 ≤ 10 ms",
      h.assay.p99Ms <= 10,
      unsteady,
    );
  }
  if (r.async) {
    const a = r.async;
    row(
      `2 async intake (${n0(a.runs)} runs), submissions/s`,
      n0(a.submitRps),
      n0(a.baselineRps),
      f2(a.submitRps / a.baselineRps),
      "—",
    );
    row(
      "2 async drain, runs completed/s",
      n0(a.completedRps),
      n0(a.baselineRps),
      f2(a.completedRps / a.baselineRps),
      "—",
    );
  }
  if (r.pg) {
    const p = r.pg;
    row(
      "7 sync runs on PostgreSQL, req/s",
      n0(p.postgres.rps),
      `SQLite ${n0(p.sqlite.rps)}`,
      f2(p.ratio),
      "≥ 0.5× SQLite",
      p.ratio >= 0.5,
    );
    row(
      "7 sync runs on PostgreSQL, p50 / p99",
      `${ms(p.postgres.p50Ms)} / ${ms(p.postgres.p99Ms)}`,
      `${ms(p.sqlite.p50Ms)} / ${ms(p.sqlite.p99Ms)}`,
      "",
      "—",
    );
    row(
      "7 a sync run on PostgreSQL: statements · transactions; CPU µs server · PostgreSQL",
      `${f2(p.perRun.statements)} · ${f2(p.perRun.transactions)}; ${n0(p.postgres.cpuUsPerRequest)} · ${n0(p.perRun.pgCpuUs)} µs`,
      `SQLite server ${n0(p.sqlite.cpuUsPerRequest)} µs`,
      "",
      "—",
    );
    const sq = r.async;
    row(
      `7 async intake on PostgreSQL (${n0(p.async.runs)} runs), submissions/s`,
      n0(p.async.submitRps),
      sq ? `SQLite ${n0(sq.submitRps)}` : "",
      sq ? f2(p.async.submitRps / sq.submitRps) : "",
      "—",
    );
    row(
      "7 async drain on PostgreSQL, runs completed/s",
      n0(p.async.completedRps),
      sq ? `SQLite ${n0(sq.completedRps)}` : "",
      sq ? f2(p.async.completedRps / sq.completedRps) : "",
      "—",
    );
  }
  if (r.nodes) {
    const one = r.nodes.rows.find((x) => x.nodes === 1);
    for (const x of r.nodes.rows)
      row(
        `9 async drain, ${x.nodes} node${x.nodes > 1 ? "s" : ""} on PostgreSQL, runs/s`,
        n0(x.runsPerSecond),
        one && x.nodes > 1 ? `1 node ${n0(one.runsPerSecond)}` : "",
        one && x.nodes > 1 ? f2(x.runsPerSecond / one.runsPerSecond) : "",
        `${x.statementsPerRun.toFixed(1)} statements, ${x.transactionsPerRun.toFixed(2)} transactions / run`,
      );
  }
  if (r.large) {
    const l = r.large;
    for (const d of l.docs) {
      if (d.kind === "JSON")
        row(
          `3 ${mib(d.bytes)} JSON array, step time`,
          ms(d.stepMs),
          `JSON.parse ${ms(l.parseMs)}`,
          f2(l.jsonRatio),
          "≤ 3",
          l.jsonRatio <= 3,
        );
      else
        row(
          `3 ${mib(d.bytes)} ${d.kind} (${d.kind === "XML" ? "XSD" : "Table Schema"}), MB/s`,
          `${d.mbPerSec.toFixed(1)} MiB/s`,
          "",
          "",
          "—",
        );
    }
  }
  if (r.http)
    row(
      "4 peak RSS during 1",
      mib(r.http.peakRssBytes),
      "",
      "",
      "< 200 MiB",
      r.http.peakRssBytes < 200 * MiB,
    );
  if (r.large)
    for (const d of r.large.docs) {
      const limit = 6 * d.bytes + 100 * MiB;
      row(
        `4 peak RSS during 3 (${d.kind})`,
        mib(d.peakRssBytes),
        "",
        "",
        `< ${mib(limit)} (6× doc + 100)`,
        d.peakRssBytes < limit,
      );
    }
  if (r.start) {
    row("5 start to /healthz 200, empty data dir", ms(r.start.emptyMs), "", "", "—");
    row(`5 start, ${n0(r.start.runs)} runs in the data dir`, ms(r.start.fullMs), "", "", "—");
  }
  if (r.schematron) {
    const x = r.schematron;
    row(
      `6 EN 16931 Schematron, ${Math.round(x.bytes / 1024)} KB UBL invoice`,
      `${x.docsPerSec.toFixed(2)} docs/s (${ms(x.msPerDoc)}/doc)`,
      `${x.parseDocsPerSec.toFixed(0)} libxml2 parses/s`,
      (x.docsPerSec / x.parseDocsPerSec).toFixed(4),
      "—",
    );
  }
  if (r.stalls) {
    const { list: l, envelopes: e } = r.stalls;
    row(
      `8 /healthz p99, ${l.viewers} viewers listing runs of ${n0(l.findingsPerRun)} findings`,
      ms(l.loaded.p99Ms),
      `idle ${ms(l.idle.p99Ms)}`,
      "",
      "≤ 50 ms",
      l.loaded.p99Ms <= 50 && l.loaded.failures === 0,
    );
    row(
      `8 /healthz p99, ${e.clients} clients sending ${Math.round(e.bytes / 1e6)} MB envelopes`,
      ms(e.loaded.p99Ms),
      `floor ${ms(e.floor.loaded.p99Ms)}, idle ${ms(e.idle.p99Ms)}`,
      "",
      "≤ 100 ms",
      e.loaded.p99Ms <= 100 && e.loaded.failures === 0,
    );
  }
  if (r.write) {
    const w = r.write;
    row(
      `10 durable write of a sync run (group commits of ${w.group}), WAL bytes/run`,
      n0(w.walBytesPerRun),
      "",
      "",
      "—",
    );
    row(
      "10 WAL frames per commit · checkpoint µs/run",
      `${w.framesPerCommit.toFixed(1)} · ${w.checkpointUsPerRun.toFixed(1)} µs`,
      "",
      "",
      "—",
    );
  }
  if (r.threads) {
    const t = r.threads;
    /** A server's req/s against the one-thread server's in the same rounds. */
    const versus = (name: string, side: Side, one: Side) =>
      row(name, n0(side.rps), `one thread ${n0(one.rps)}`, f2(side.rps / one.rps), "—");
    versus(
      `11 sync runs, ${t.threads} HTTP threads vs all on one thread, every core, wrk unpinned, ${t.connections} connections, req/s`,
      t.many,
      t.one,
    );
    versus(`11 the same at ${t.highConnections} connections, req/s`, t.manyHigh, t.oneHigh);
    row(
      `11 CPU per run (all threads), ${t.threads} HTTP threads · one thread, at ${t.connections} · ${t.highConnections} connections`,
      `${n0(t.many.cpuUsPerRequest)} · ${n0(t.one.cpuUsPerRequest)} µs · ${n0(t.manyHigh.cpuUsPerRequest)} · ${n0(t.oneHigh.cpuUsPerRequest)} µs`,
      "",
      "",
      "—",
    );
    versus("11 sync runs, the writer thread vs all on one thread, req/s", t.writer, t.one);
    const p = [2, 4, 8].map((c) => [c, project(t, c)] as const);
    if (p.every(([, x]) => x !== null))
      row(
        `11 projected runs/s on 2 · 4 · 8 cores (from CPU per run and the write lock's ${f1(t.lockUsPerRun!)} µs a run)`,
        p.map(([, x]) => n0(x!)).join(" · "),
        "",
        "",
        "—",
      );
    const pl = t.placed;
    if (pl) {
      const main = (x: Side) => x.cpuUsByThread.main ?? Number.NaN;
      const idle = (x: Side) => (x.coreIdle === null ? "" : ` · idle ${Math.round(x.coreIdle * 100)} %`);
      versus(
        "11 placed (main thread alone on one core; its other threads and wrk on the other): the writer thread vs one thread, req/s",
        pl.writer,
        pl.one,
      );
      row(
        "11 placed: main thread µs per run and its core's idle share, writer thread · one thread",
        `${n0(main(pl.writer))} µs${idle(pl.writer)} · ${n0(main(pl.one))} µs${idle(pl.one)}`,
        "",
        "",
        "—",
      );
      row(
        "11 placed: runs/s the main thread allows on any number of cores (10⁶ ÷ its µs per run), writer thread · one thread",
        `${n0(1e6 / main(pl.writer))} · ${n0(1e6 / main(pl.one))}`,
        "",
        "",
        "—",
      );
    }
  }
  return out;
}

const verdict = (r: Row) => (r.ok === null ? "" : r.unreliable ? "UNRELIABLE" : r.ok ? "met" : "MISSED");

export function textTable(rs: Row[]): string {
  const head = ["measure", "value", "baseline", "ratio", "target", ""];
  const cells = rs.map((r) => [r.measure, r.value, r.baseline, r.ratio, r.target, verdict(r)]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...cells.map(line)].join("\n");
}

export function markdownTable(rs: Row[]): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  return [
    "| Measure | Value | Baseline | Ratio | Target | |",
    "|---|---:|---:|---:|---|---|",
    ...rs.map(
      (r) => `| ${[r.measure, r.value, r.baseline, r.ratio, r.target, verdict(r)].map(esc).join(" | ")} |`,
    ),
  ].join("\n");
}

/** Per-round and per-document figures behind the table. */
export function details(r: Results): string {
  const out: string[] = [];
  if (r.http) {
    const fmt = (x: HttpResult["assay"]["rounds"][number]) =>
      `${n0(x.rps)} req/s, p50 ${ms(x.p50Ms)}, p99 ${ms(x.p99Ms)}`;
    const peer = r.http.peer;
    out.push(`Measure 1, round by round (baseline · floor · ${peer ? "peer · " : ""}Assay):`);
    for (const [i, a] of r.http.assay.rounds.entries())
      out.push(
        `- round ${i + 1}: ${fmt(r.http.baseline.rounds[i]!)} · ${fmt(r.http.floor.rounds[i]!)} · ${peer ? `${fmt(peer.rounds[i]!)} · ` : ""}${fmt(a)}`,
      );
    const byThread = (x: { cpuUsByThread: Record<string, number> }) =>
      Object.entries(x.cpuUsByThread)
        .filter(([, us]) => us >= 0.5)
        .sort((a, b) => b[1] - a[1])
        .map(([g, us]) => `${g} ${us.toFixed(0)}`)
        .join(", ");
    out.push(
      `- CPU µs per run by thread: Assay ${byThread(r.http.assay)}; floor ${byThread(r.http.floor)}${peer ? `; peer ${byThread(peer)}` : ""}.`,
    );
    const idle = (x: { coreIdle: number | null }) =>
      x.coreIdle === null ? "n/a" : `${(x.coreIdle * 100).toFixed(0)} %`;
    if (r.http.assay.coreIdle !== null)
      out.push(
        `- The server's core was idle ${idle(r.http.assay)} of Assay's rounds, ${idle(r.http.floor)} of the floor's${peer ? `, ${idle(peer)} of the peer's` : ""}: a server waiting for its group commit's window is not bound by its CPU, so CPU per run is the comparison that holds once neither idles (docs/benchmarks.md, fourteenth pass).`,
      );
    if (r.http.peerSkipped) out.push(`- The Node peer was skipped: ${r.http.peerSkipped}.`);
    else if (peer) out.push(`- Peer answer errors: ${peer.errors}.`);
    out.push(
      `- Assay answer errors: ${r.http.assay.errors}; runs that did not succeed: ${r.http.notSucceeded}; slowest answer ${ms(r.http.assay.maxMs)}. Floor answer errors: ${r.http.floor.errors}.`,
    );
    const spread = baselineSpread(r.http);
    out.push(
      spread > MAX_BASELINE_SPREAD
        ? `- UNRELIABLE: the baseline's rounds ranged ${spread.toFixed(2)}× (over ${MAX_BASELINE_SPREAD}×): the host's speed changed during the measure, so its ratio and p99 show nothing; run it again.`
        : `- The baseline's rounds ranged ${spread.toFixed(2)}× (steady within ${MAX_BASELINE_SPREAD}×).`,
    );
  }
  if (r.async)
    out.push(
      `Measure 2: ${n0(r.async.accepted)} of ${n0(r.async.runs)} answered 202; the queue emptied ${r.async.drainTailSeconds.toFixed(1)} s after the last answer; peak RSS ${mib(r.async.peakRssBytes)}.`,
    );
  if (r.large)
    for (const d of r.large.docs)
      out.push(
        `Measure 3, ${d.kind}: ${n0(d.bytes)} bytes, run ${d.status}, step ${ms(d.stepMs)}, whole request ${ms(d.requestMs)}, peak RSS ${mib(d.peakRssBytes)}.`,
      );
  if (r.start)
    out.push(
      `Measure 5: the ${n0(r.start.runs)}-run data dir was written in ${r.start.seedSeconds.toFixed(1)} s.`,
    );
  if (r.schematron)
    out.push(
      `Measure 6: the rules compiled and ran on the first document in ${ms(r.schematron.compileMs)}; ${r.schematron.findings} findings per document.`,
    );
  if (r.stalls) {
    const { list: l, envelopes: e } = r.stalls;
    const probe = (p: StallResult["list"]["idle"]) =>
      `${n0(p.n)} probes, p50 ${ms(p.p50Ms)}, p99 ${ms(p.p99Ms)}, max ${ms(p.maxMs)}${p.failures ? `, ${p.failures} failed` : ""}`;
    out.push(
      `Measure 8a: ${l.runs} runs of ${n0(l.findingsPerRun)} findings written in ${l.seedSeconds.toFixed(1)} s; ${l.viewers} viewers listed them ${n0(l.lists)} times (a list p50 ${ms(l.listP50Ms)}, p99 ${ms(l.listP99Ms)}); /healthz idle: ${probe(l.idle)}; under load: ${probe(l.loaded)}.`,
    );
    out.push(
      `Measure 8b: ${e.clients} clients sent ${e.sent} envelopes of ${n0(e.bytes)} bytes (answers ${JSON.stringify(e.statuses)}, a request p50 ${ms(e.requestP50Ms)}); /healthz idle: ${probe(e.idle)}; under load: ${probe(e.loaded)}. The floor (a bare server that only reads the same bodies, ${e.floor.sent} of them): ${probe(e.floor.loaded)}.`,
    );
  }
  if (r.write)
    out.push(
      `Measure 10 (${n0(r.write.runs)} runs after ${n0(r.write.warm)}): ${describeWriteCost(r.write)}.`,
    );
  if (r.threads) {
    const t = r.threads;
    const by = (x: Side) =>
      Object.entries(x.cpuUsByThread)
        .filter(([, v]) => v >= 0.5)
        .map(([g, v]) => `${g} ${n0(v)}`)
        .join(", ");
    const served = Object.entries(t.served)
      .map(
        ([th, paths]) =>
          `thread ${th}: ${Object.entries(paths)
            .map(([p, n]) => `${p} ${n0(n)}`)
            .join(", ")}`,
      )
      .join("; ");
    out.push(
      `Measure 11, round by round (one thread · ${t.threads} HTTP threads · writer thread at ${t.connections} connections; one thread · ${t.threads} HTTP threads at ${t.highConnections}): ${t.one.rounds
        .map(
          (a, i) =>
            `${n0(a.rps)} · ${n0(t.many.rounds[i]!.rps)} · ${n0(t.writer.rounds[i]!.rps)}; ${n0(t.oneHigh.rounds[i]!.rps)} · ${n0(t.manyHigh.rounds[i]!.rps)}`,
        )
        .join(
          " | ",
        )} req/s; p50/p99 ${ms(t.one.p50Ms)}/${ms(t.one.p99Ms)} · ${ms(t.many.p50Ms)}/${ms(t.many.p99Ms)} · ${ms(t.writer.p50Ms)}/${ms(t.writer.p99Ms)}; ${ms(t.oneHigh.p50Ms)}/${ms(t.oneHigh.p99Ms)} · ${ms(t.manyHigh.p50Ms)}/${ms(t.manyHigh.p99Ms)}. CPU µs per run by thread: one thread ${by(t.one)}; ${t.threads} HTTP threads ${by(t.many)} (workers: the HTTP threads, the validation worker, the checkpoint thread); writer thread ${by(t.writer)}. Requests served during the rounds: ${served}. Errors ${t.one.errors} · ${t.many.errors} · ${t.writer.errors}; ${t.oneHigh.errors} · ${t.manyHigh.errors}; runs that did not succeed: ${t.notSucceeded}.`,
    );
    if (t.placed)
      out.push(
        `Measure 11 placed, round by round (one thread · writer thread): ${t.placed.one.rounds
          .map((a, i) => `${n0(a.rps)} · ${n0(t.placed!.writer.rounds[i]!.rps)}`)
          .join(
            "; ",
          )} req/s; p50/p99 ${ms(t.placed.one.p50Ms)}/${ms(t.placed.one.p99Ms)} · ${ms(t.placed.writer.p50Ms)}/${ms(t.placed.writer.p99Ms)}. CPU µs per run by thread: one thread ${by(t.placed.one)}; writer thread ${by(t.placed.writer)}. Errors ${t.placed.one.errors} · ${t.placed.writer.errors}.`,
      );
  }
  if (r.skipped.length) out.push(`Skipped: ${r.skipped.join("; ")}.`);
  return out.join("\n");
}

const BEGIN = "<!-- bench:begin (written by npm run bench; edit outside these markers) -->";
const END = "<!-- bench:end -->";

export function writeDoc(path: string, generated: string): void {
  const block = `${BEGIN}\n${generated}\n${END}`;
  const old = existsSync(path) ? readFileSync(path, "utf8") : `# Benchmarks\n\n${BEGIN}\n${END}\n`;
  const from = old.indexOf(BEGIN);
  const to = old.indexOf(END);
  const doc =
    from >= 0 && to > from
      ? old.slice(0, from) + block + old.slice(to + END.length)
      : `${old.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, doc);
}
