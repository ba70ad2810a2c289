// GET /metrics read by a strict parser of the Prometheus text exposition format 0.0.4 (the version
// its Content-Type claims): HELP and TYPE once per family and before its samples, a family's
// samples together, names and label names as the format allows, label values escaped, counters
// ending in `_total`, histograms with cumulative buckets ending at `+Inf` equal to `_count`, a
// `_sum`, the same `le` set in every series, no series twice. On SQLite and PostgreSQL, with one
// HTTP thread and with two, and on PostgreSQL with two nodes on one database (every series says
// `node`). Requests no route matches (any path, any method Bun accepts) add one series per
// method and status, never one per path.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { testConfig } from "../src/config.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { rawRequest } from "./helpers/raw-http.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  line: number;
}
interface Family {
  name: string;
  help?: string;
  type?: string;
  samples: Sample[];
}

/** Parses one label set, `{` to `}` (inclusive) starting at `i`; returns the labels and the index after `}`. */
function parseLabels(text: string, i: number, fail: (m: string) => never) {
  const labels: Record<string, string> = {};
  if (text[i] !== "{") fail("expected {");
  i++;
  let first = true;
  for (;;) {
    // `name{}`: outside the 0.0.4 document's EBNF, inside OpenMetrics' ABNF, and read by
    // Prometheus, expfmt and prometheus_client alike; served for unlabelled series on SQLite
    // (docs/decisions.md, "Metrics: `{}` on unlabelled series").
    if (text[i] === "}") return { labels, end: i + 1 };
    if (!first) {
      if (text[i] !== ",") fail(`expected , at ${i}`);
      i++;
      if (text[i] === "}") return { labels, end: i + 1 }; // a trailing comma is allowed
    }
    first = false;
    const eq = text.indexOf("=", i);
    if (eq < 0) fail("label without =");
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name) || name.startsWith("__")) fail(`bad label name ${JSON.stringify(name)}`);
    if (name in labels) fail(`label ${name} twice`);
    i = eq + 1;
    if (text[i] !== '"') fail("label value not quoted");
    i++;
    let value = "";
    for (;;) {
      const c = text[i];
      if (c === undefined) fail("unterminated label value");
      if (c === '"') break;
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "\\") value += "\\";
        else if (e === '"') value += '"';
        else if (e === "n") value += "\n";
        else fail(`bad escape \\${e}`);
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[name] = value;
    i++;
  }
}

function parseValue(s: string, fail: (m: string) => never): number {
  if (s === "+Inf") return Number.POSITIVE_INFINITY;
  if (s === "-Inf") return Number.NEGATIVE_INFINITY;
  if (s === "NaN") return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) fail(`bad value ${JSON.stringify(s)}`);
  return Number(s);
}

/** The families of an exposition, or throws naming the line that breaks the format. */
function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith("\n")) throw new Error("the exposition does not end with a line feed");
  const families = new Map<string, Family>();
  const finished = new Set<string>(); // families whose samples ended (another family's began)
  const seen = new Set<string>();
  let current: Family | undefined;
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) {
      f = { name, samples: [] };
      families.set(name, f);
    }
    return f;
  };
  const lines = text.slice(0, -1).split("\n");
  lines.forEach((line, n) => {
    const fail = (m: string): never => {
      throw new Error(`line ${n + 1}: ${m}: ${JSON.stringify(line)}`);
    };
    if (line === "") return;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) fail("bad metric name");
      if (finished.has(name)) fail(`${kind} after the family's samples ended`);
      const f = family(name);
      if (f.samples.length > 0) fail(`${kind} after samples`);
      if (current && current !== f) finished.add(current.name);
      current = f;
      if (kind === "HELP") {
        if (f.help !== undefined) fail("HELP twice");
        if (/\\[^\\n]|\\$/.test(rest)) fail("bad escape in HELP");
        f.help = rest;
      } else {
        if (f.type !== undefined) fail("TYPE twice");
        if (!TYPES.has(rest)) fail("unknown type");
        f.type = rest;
      }
      return;
    }
    const nameEnd = line.search(/[{ ]/);
    if (nameEnd <= 0) fail("no metric name");
    const name = line.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) fail("bad metric name");
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (line[i] === "{") ({ labels, end: i } = parseLabels(line, i, fail));
    if (line[i] !== " ") fail("no space before the value");
    const parts = line.slice(i + 1).split(" ");
    if (parts.length > 2 || parts[0] === "") fail("bad value and timestamp");
    const value = parseValue(parts[0]!, fail);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) fail("bad timestamp");
    // The family: the histogram's or summary's for its suffixed samples, else the sample's own.
    const base = name.replace(/_(bucket|sum|count)$/, "");
    const owner =
      base !== name && ["histogram", "summary"].includes(families.get(base)?.type ?? "") ? base : name;
    if (finished.has(owner)) fail("the family's samples are not together");
    const f = family(owner);
    if (current && current !== f) finished.add(current.name);
    current = f;
    const series = `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
    if (seen.has(series)) fail("the same series twice");
    seen.add(series);
    f.samples.push({ name, labels, value, line: n + 1 });
  });
  for (const f of families.values()) checkFamily(f);
  return families;
}

function checkFamily(f: Family) {
  const fail = (m: string): never => {
    throw new Error(`${f.name}: ${m}`);
  };
  if (f.help === undefined) fail("no HELP");
  if (f.type === undefined) fail("no TYPE");
  if (f.type === "counter") {
    if (!f.name.endsWith("_total")) fail("a counter's name does not end in _total");
    for (const s of f.samples) {
      if (s.name !== f.name) fail(`sample ${s.name} in a counter`);
      if (!(s.value >= 0)) fail(`a negative counter at line ${s.line}`);
    }
  }
  if (f.type === "gauge")
    for (const s of f.samples) if (s.name !== f.name) fail(`sample ${s.name} in a gauge`);
  if (f.type !== "histogram") return;
  const bySeries = new Map<string, { buckets: [string, number][]; sum?: number; count?: number }>();
  const get = (labels: Record<string, string>) => {
    const { le: _le, ...rest } = labels;
    const k = JSON.stringify(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)));
    let s = bySeries.get(k);
    if (!s) {
      s = { buckets: [] };
      bySeries.set(k, s);
    }
    return s;
  };
  for (const s of f.samples) {
    const series = get(s.labels);
    if (s.name === `${f.name}_bucket`) {
      if (s.labels.le === undefined) fail(`a bucket without le at line ${s.line}`);
      series.buckets.push([s.labels.le!, s.value]);
    } else if (s.name === `${f.name}_sum`) {
      if ("le" in s.labels) fail("le on _sum");
      series.sum = s.value;
    } else if (s.name === `${f.name}_count`) {
      if ("le" in s.labels) fail("le on _count");
      series.count = s.value;
    } else fail(`sample ${s.name} in a histogram`);
  }
  let les: string | undefined;
  for (const [k, s] of bySeries) {
    if (s.sum === undefined) fail(`${k}: no _sum`);
    if (s.count === undefined) fail(`${k}: no _count`);
    const bounds = s.buckets.map(([le]) => le);
    if (bounds.at(-1) !== "+Inf") fail(`${k}: the last bucket is not +Inf`);
    for (const le of bounds.slice(0, -1))
      if (!/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(le)) fail(`${k}: le ${le} is not a number`);
    const nums = bounds.map((b) => (b === "+Inf" ? Number.POSITIVE_INFINITY : Number(b)));
    for (let i = 1; i < nums.length; i++) if (!(nums[i]! > nums[i - 1]!)) fail(`${k}: le not ascending`);
    for (let i = 1; i < s.buckets.length; i++)
      if (s.buckets[i]![1] < s.buckets[i - 1]![1]) fail(`${k}: buckets not cumulative`);
    if (s.buckets.at(-1)![1] !== s.count) fail(`${k}: +Inf is not _count`);
    const set = bounds.join(",");
    if (les !== undefined && set !== les) fail(`${k}: le ${set} where others have ${les}`);
    les = set;
  }
}

describe("the strict parser", () => {
  test("refuses what breaks the format", () => {
    const bad = [
      "a_total 1", // no line feed at the end
      "a_total 1\n", // no HELP, TYPE
      "# HELP a_total x\n# TYPE a_total counter\na_total 1\n# HELP a_total y\n",
      "# TYPE a counter\n# HELP a x\na 1\n", // a counter without _total
      '# HELP a x\n# TYPE a gauge\na{b="1"} 1\na{b="1"} 2\n',
      '# HELP a x\n# TYPE a gauge\na{b="\\t"} 1\n',
      "# HELP a x\n# TYPE a gauge\n# HELP b x\n# TYPE b gauge\na 1\nb 1\n",
      '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      '# HELP h x\n# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n',
      '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 1\nh_count 1\n',
    ];
    for (const t of bad) expect(() => parseExposition(t)).toThrow();
    const good =
      '# HELP h x\n# TYPE h histogram\nh_bucket{a="q\\"\\\\\\n",le="1"} 1\nh_bucket{a="q\\"\\\\\\n",le="+Inf"} 2\nh_sum{a="q\\"\\\\\\n"} 3\nh_count{a="q\\"\\\\\\n"} 2\n# HELP g x\n# TYPE g gauge\ng 1\n';
    const f = parseExposition(good);
    expect(f.get("h")!.samples[0]!.labels).toEqual({ a: 'q"\\\n', le: "1" });
  });
});

/** A read of /metrics: its Content-Type and families. */
async function scrape(url: string, token?: string) {
  const r = await fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const text = await r.text();
  return { text, families: parseExposition(text) };
}

/** Traffic that makes every family's series: runs, steps, 4xx of every kind, unknown paths and methods. */
async function traffic(s: TestServer, url: string) {
  const port = Number(new URL(url).port);
  for (const path of ['/x"y', "/a\\b", "/%E2%9C%93/%0A", `/r${Math.random()}`, "/api/v1/orgs/ü/workflows/"])
    for (const method of ["GET", "PROPFIND", "MKCOL", "PATCH"])
      await rawRequest(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  await call({ url }, "POST", "/api/v1/orgs/acme/workflows/obs/runs/", {
    token: s.rootToken,
    body: { id: 1 },
  });
  await call({ url }, "POST", "/api/v1/orgs/acme/workflows/obs/runs/", {
    token: s.rootToken,
    body: { id: "x" },
  });
  await call({ url }, "GET", "/api/v1/orgs/acme/workflows/obs/", { token: "assay_nope" });
}

describe.each([1, 2])("GET /metrics (%i HTTP thread(s))", (threads) => {
  let s: TestServer;
  let other: (RunningServer & { dir: string }) | undefined;
  beforeAll(async () => {
    s = await startTestServer({ metrics_enabled: true, ...(threads > 1 ? { http_threads: 2 } : {}) });
    await createWorkflow(s, s.rootToken, {
      slug: "obs",
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "schema",
          validator: "json_schema",
          config: { schema: { type: "object", properties: { id: { type: "integer" } } } },
        },
      ],
    });
    if (onPostgres) {
      // A second node on the same database, under another name.
      const dir = testTempDir("assay-metrics-node-");
      const node = await startServer(
        testConfig({
          port: 0,
          node_id: "node-2",
          log_level: "silent",
          rate_limit_disabled: true,
          metrics_enabled: true,
          data_dir: dir,
          database_url: s.databaseUrl,
          sync_wait_ms: 60_000,
          ...(threads > 1 ? { http_threads: 2 } : {}),
        }),
      );
      other = Object.assign(node, { dir });
    }
  });
  afterAll(async () => {
    if (other) {
      await other.stop();
      rmSync(other.dir, { recursive: true, force: true });
    }
    await s.close();
  });

  test("every node's answer is well-formed, before and after traffic", async () => {
    const urls = [s.url, ...(other ? [other.url] : [])];
    for (const url of urls) await scrape(url);
    for (const url of urls) await traffic(s, url);
    for (const [i, url] of urls.entries()) {
      const { families } = await scrape(url);
      const names = [...families.keys()];
      expect(names).toContain("assay_http_request_duration_seconds");
      expect(names).toContain("assay_step_duration_seconds");
      expect(names).toContain("assay_runs_finished_total");
      for (const f of families.values()) {
        for (const x of f.samples) {
          // On PostgreSQL every series names its node; on SQLite (one node) none does.
          if (onPostgres) expect(x.labels.node).toBe(i === 0 ? "test-node" : "node-2");
          else expect(x.labels.node).toBeUndefined();
        }
      }
      const http = families.get("assay_http_request_duration_seconds")!.samples;
      const routes = new Set(http.map((x) => x.labels.route));
      // No path the client made up is a route: templates (they start with /) or `unmatched`.
      for (const r of routes)
        expect(r === "unmatched" || (r!.startsWith("/") && !/[\\"\n]|r0\./.test(r!))).toBe(true);
      const unmatched = http.filter((x) => x.labels.route === "unmatched" && x.name.endsWith("_count"));
      const methods = new Set(unmatched.map((x) => x.labels.method));
      expect(methods).toEqual(new Set(["GET", "PROPFIND", "MKCOL", "PATCH"]));
    }
  });
});
