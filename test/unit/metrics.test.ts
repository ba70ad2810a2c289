import { expect, test } from "bun:test";
import { Metrics } from "../../src/metrics/registry.ts";

test("series keys: labels sorted by name, values escaped only when they need it", () => {
  const m = new Metrics();
  m.runsFinished.inc({ status: "succeeded" });
  m.runsFinished.inc({ status: "succeeded" });
  m.runsFinished.inc({ status: 'a"b\\c\nd' });
  m.httpDuration.observe({ status: "201", method: "POST", route: "/x" }, 0.003);
  m.httpDuration.observe({ route: "/x", method: "POST", status: "201" }, 0.02);
  const text = m.render();
  expect(text).toContain('assay_runs_finished_total{status="succeeded"} 2');
  expect(text).toContain('assay_runs_finished_total{status="a\\"b\\\\c\\nd"} 1');
  // Same labels in another order are the same series.
  expect(text).toContain(
    'assay_http_request_duration_seconds_count{method="POST",route="/x",status="201"} 2',
  );
  expect(text).toContain(
    'assay_http_request_duration_seconds_bucket{method="POST",route="/x",status="201",le="0.005"} 1',
  );
});

test("series keys: label sets whose concatenations look alike stay distinct series", () => {
  const m = new Metrics();
  // Values that contain what a naive joined key would use as separators.
  m.httpDuration.observe({ method: "GET", route: "/a=1:b" }, 0.001);
  m.httpDuration.observe({ method: "GET", route: "/a" }, 0.001);
  m.httpDuration.observe({ method: "GET=3:GET", route: "/a" }, 0.001);
  m.httpDuration.observe({ method: "GET", route: "/a" }, 0.001);
  const counts = m
    .render()
    .split("\n")
    .filter((l) => l.startsWith("assay_http_request_duration_seconds_count"));
  expect(counts).toEqual([
    'assay_http_request_duration_seconds_count{method="GET",route="/a=1:b"} 1',
    'assay_http_request_duration_seconds_count{method="GET",route="/a"} 2',
    'assay_http_request_duration_seconds_count{method="GET=3:GET",route="/a"} 1',
  ]);
});

test("an HTTP thread's drain, absorbed by the main thread, renders as if observed there; a drain starts over", () => {
  const ops = (m: Metrics, at: number) => {
    m.httpDuration.observe({ route: "/r", method: "POST", status: "201" }, 0.003 * at);
    m.stepDuration.observe({ validator: "json_schema", status: "passed" }, 0.0002 * at);
    m.runsFinished.inc({ status: at % 2 ? "succeeded" : "failed" });
  };
  const alone = new Metrics();
  const main = new Metrics();
  const thread = new Metrics();
  for (let i = 1; i <= 6; i++) {
    ops(alone, i);
    ops(i <= 2 ? main : thread, i);
  }
  main.absorb(thread.drain());
  expect(main.render()).toBe(alone.render());
  // Drained: a second drain carries only what was observed since, and adds nothing twice.
  ops(thread, 7);
  ops(alone, 7);
  main.absorb(thread.drain());
  main.absorb(thread.drain());
  expect(main.render()).toBe(alone.render());
  expect(thread.drain()).toEqual({ http: [], steps: [], runs: [] });
});
