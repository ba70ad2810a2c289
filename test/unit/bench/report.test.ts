// The benchmark's table judges measure 1 only when the baseline held still: on a host whose speed
// changed mid-run the bare server loses more than Assay, which once read as a 0.17 ratio.
import { describe, expect, test } from "bun:test";
import type { HttpResult, Side } from "../../../scripts/bench/http.ts";
import {
  MAX_BASELINE_SPREAD,
  baselineSpread,
  details,
  rows,
  textTable,
} from "../../../scripts/bench/report.ts";

const round = (rps: number, p99Ms: number) => ({
  requests: rps * 6,
  seconds: 6,
  rps,
  p50Ms: 1,
  p99Ms,
  maxMs: p99Ms * 2,
  non2xx: 0,
  socketErrors: 0,
});
const side = (rps: number[], p99Ms: number, coreIdle: number | null = null): Side => ({
  rounds: rps.map((x) => round(x, p99Ms)),
  rps: rps.reduce((a, b) => a + b, 0) / rps.length,
  p50Ms: 1,
  p99Ms,
  maxMs: p99Ms * 2,
  errors: 0,
  cpuUsPerRequest: 1e6 / rps[0]!,
  cpuUsByThread: { main: 1e6 / rps[0]! },
  coreIdle,
});
const http = (baseline: number[], assay: number[], p99Ms: number): HttpResult => {
  const b = side(baseline, 0.7);
  const a = side(assay, p99Ms);
  const floor = side(
    assay.map((x) => x * 1.5),
    p99Ms,
  );
  return {
    baseline: b,
    assay: a,
    ratio: a.rps / b.rps,
    floor,
    peer: null,
    peerSkipped: "Node.js is not installed",
    peakRssBytes: 100 * 2 ** 20,
    notSucceeded: 0,
  };
};
const verdicts = (h: HttpResult, judge = true) =>
  rows({ http: h, skipped: [] }, judge).map((r) => [r.measure, r.ok, r.unreliable ?? false]);

describe("measure 1 is judged only on a steady baseline", () => {
  test("steady rounds: met and missed as measured", () => {
    const h = http([84_000, 86_000, 81_000, 88_000, 85_000], [7_000, 7_100, 6_900, 7_200, 7_000], 8.7);
    expect(baselineSpread(h)).toBeLessThan(MAX_BASELINE_SPREAD);
    expect(verdicts(h)).toEqual([
      ["1 sync runs over HTTP, req/s", false, false],
      ["1 floor: the same work hand-written, req/s", null, false],
      ["1 Assay ÷ floor, req/s", false, false],
      ["1 CPU per run (all threads): Assay · floor", null, false],
      ["1 sync runs, p50 / p99", true, false],
      ["4 peak RSS during 1", true, false],
    ]);
    expect(details({ http: h, skipped: [] })).toContain("steady within 1.5×");
  });

  test("a baseline ranging 3.6× makes the ratio and the p99 unreliable, whatever they read", () => {
    const h = http([11_192, 9_610, 20_940, 34_416, 13_111], [2_779, 2_918, 2_753, 3_641, 2_834], 14.5);
    expect(h.ratio).toBeGreaterThan(0.15);
    expect(baselineSpread(h)).toBeCloseTo(3.58, 2);
    expect(verdicts(h)).toEqual([
      ["1 sync runs over HTTP, req/s", false, true],
      ["1 floor: the same work hand-written, req/s", null, false],
      ["1 Assay ÷ floor, req/s", false, true],
      ["1 CPU per run (all threads): Assay · floor", null, false],
      ["1 sync runs, p50 / p99", false, true],
      ["4 peak RSS during 1", true, false],
    ]);
    expect(textTable(rows({ http: h, skipped: [] }, true))).toContain("UNRELIABLE");
    expect(details({ http: h, skipped: [] })).toContain("UNRELIABLE: the baseline's rounds ranged 3.58×");
  });

  test("a quick run judges nothing, steady or not", () => {
    const h = http([11_192, 34_416], [2_779, 3_641], 14.5);
    expect(verdicts(h, false).every(([, ok, unreliable]) => ok === null && unreliable === false)).toBe(true);
  });
});

describe("measure 1 reports the floor beside Assay", () => {
  test("the floor's ratio to the baseline and Assay's share of the floor, per round too", () => {
    const h = http([80_000, 80_000], [8_000, 8_000], 8);
    const byName = new Map(rows({ http: h, skipped: [] }, true).map((r) => [r.measure, r]));
    expect(byName.get("1 floor: the same work hand-written, req/s")).toMatchObject({
      value: "12,000",
      baseline: "80,000",
      ratio: "0.15",
    });
    expect(byName.get("1 Assay ÷ floor, req/s")?.ratio).toBe("0.67");
    expect(details({ http: h, skipped: [] })).toContain(
      "- round 1: 80,000 req/s, p50 1.0 ms, p99 0.7 ms · 12,000 req/s, p50 1.0 ms, p99 8.0 ms · 8,000 req/s",
    );
  });
});

describe("measure 1 reports the Node peer beside Assay (issue #26)", () => {
  test("the peer's ratio, Assay ÷ peer against 2×, and CPU per run of every side", () => {
    const h = { ...http([80_000, 80_000], [8_000, 8_000], 8), peerSkipped: null };
    h.peer = side([3_000, 5_000], 20);
    const byName = new Map(rows({ http: h, skipped: [] }, true).map((r) => [r.measure, r]));
    expect(byName.get("1 peer: Fastify + Ajv + better-sqlite3 (Node), req/s")).toMatchObject({
      value: "4,000",
      baseline: "80,000",
      ratio: "0.050",
      ok: null,
    });
    expect(byName.get("1 Assay ÷ peer, req/s")).toMatchObject({ ratio: "2.00", target: "≥ 2", ok: true });
    expect(byName.get("1 CPU per run (all threads): Assay · floor · peer")).toMatchObject({
      value: "125 µs · 83 µs · 333 µs",
      baseline: "bare 13 µs",
    });
    const text = details({ http: h, skipped: [] });
    expect(text).toContain("(baseline · floor · peer · Assay)");
    expect(text).toContain("- CPU µs per run by thread: Assay main 125; floor main 83; peer main 333.");
    expect(text).toContain("· 3,000 req/s, p50 1.0 ms, p99 20.0 ms · 8,000 req/s");
  });

  test("a skipped peer is named with its reason and leaves no peer rows", () => {
    const h = http([80_000, 80_000], [8_000, 8_000], 8);
    const names = rows({ http: h, skipped: [] }, true).map((r) => r.measure);
    expect(names.some((n) => n.includes("peer"))).toBe(false);
    expect(details({ http: h, skipped: [] })).toContain(
      "- The Node peer was skipped: Node.js is not installed.",
    );
  });
});

describe("the server core's idle share", () => {
  const steady = [84_000, 86_000, 81_000, 88_000, 85_000];
  const assay = [7_000, 7_100, 6_900, 7_200, 7_000];

  test("pinned: the details say how idle the core was for each side", () => {
    const h = http(steady, assay, 8.7);
    h.assay = side(assay, 8.7, 0.243);
    h.floor = side(
      assay.map((x) => x * 1.1),
      8.7,
      0.351,
    );
    expect(details({ http: h, skipped: [] })).toContain(
      "- The server's core was idle 24 % of Assay's rounds, 35 % of the floor's: ",
    );
  });

  test("not pinned (no core to read): no such line", () => {
    expect(details({ http: http(steady, assay, 8.7), skipped: [] })).not.toContain("core was idle");
  });
});
