// The Prometheus registry's series keys (src/metrics/registry.ts): remembered per label set, so
// they must stay exactly what formatting gives — one series per label set whatever the order of
// its labels, no two label sets sharing a series, values escaped, and label sets beyond the
// remembered ones still counted apart.
import { describe, expect, test } from "bun:test";
import { Metrics } from "../src/metrics/registry.ts";

const lines = (m: Metrics, prefix: string) =>
  m
    .render()
    .split("\n")
    .filter((l) => l.startsWith(prefix));

describe("series keys", () => {
  test("the same labels in another order are one series, sorted by name", () => {
    const m = new Metrics();
    m.runsFinished.inc({ status: "failed", b: "x" });
    m.runsFinished.inc({ b: "x", status: "failed" });
    m.runsFinished.inc({ b: "x", status: "failed" });
    expect(lines(m, "assay_runs_finished_total{")).toEqual([
      'assay_runs_finished_total{b="x",status="failed"} 3',
    ]);
  });

  test("label sets whose names and values run together stay apart", () => {
    const m = new Metrics();
    m.runsFinished.inc({ a: "bc" });
    m.runsFinished.inc({ ab: "c" });
    m.runsFinished.inc({ a: "b", c: "" });
    m.runsFinished.inc({ a: "b" });
    m.runsFinished.inc({});
    m.runsFinished.inc({});
    expect(lines(m, "assay_runs_finished_total{").sort()).toEqual([
      'assay_runs_finished_total{a="b",c=""} 1',
      'assay_runs_finished_total{a="b"} 1',
      'assay_runs_finished_total{a="bc"} 1',
      'assay_runs_finished_total{ab="c"} 1',
      "assay_runs_finished_total{} 2",
    ]);
  });

  test("values are escaped, on the first use and on later ones", () => {
    const m = new Metrics();
    for (let i = 0; i < 2; i++)
      m.httpDuration.observe({ route: 'a"b\\c\nd', method: "GET", status: "200" }, 0.001);
    expect(lines(m, "assay_http_request_duration_seconds_count")).toEqual([
      'assay_http_request_duration_seconds_count{method="GET",route="a\\"b\\\\c\\nd",status="200"} 2',
    ]);
  });

  test("more label sets than are remembered are still counted apart", () => {
    const m = new Metrics();
    const n = 12_000;
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < n; i++) m.runsFinished.inc({ status: `s${i}`, k: "v" });
    const out = lines(m, "assay_runs_finished_total{");
    expect(out.length).toBe(n);
    expect(out).toContain('assay_runs_finished_total{k="v",status="s0"} 2');
    expect(out).toContain(`assay_runs_finished_total{k="v",status="s${n - 1}"} 2`);
    expect(out.every((l) => l.endsWith(" 2"))).toBe(true);
  });
});
