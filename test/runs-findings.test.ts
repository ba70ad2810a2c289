// Hole 2 of issue #19: a run's findings were stored inside the run row and every read parsed all
// of them on the HTTP thread — a run list over runs of 100,000 findings froze the server. Now the
// findings are stored apart (migration 0007), a list reads step summaries only, a run answer
// carries at most 1000 findings (each step says how many it has), and
// GET …/runs/{id}/findings/ pages through all of them. Reports stay whole up to 10,000 findings.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let token: string;
const LINES = 1500;
/** One finding per line in each step: every line is longer than 1 character. */
const doc = (lines: number) => `${Array.from({ length: lines }, (_, i) => `line ${i + 1}`).join("\n")}\n`;
const longLines = (name: string, maxFindings: number) => ({
  name,
  validator: "text_rules",
  config: { max_line_length: 1, max_findings: maxFindings },
});

let many: { id: string; json: Record<string, unknown> & { steps: Step[] } };
interface Finding {
  severity: string;
  code: string;
  message: string;
  line: number | null;
}
interface Step {
  order: number;
  findings: Finding[];
  findings_count: number;
}

beforeAll(async () => {
  s = await startTestServer();
  token = (await s.user("ed", "acme", "author")).token;
  await createWorkflow(s, token, {
    slug: "many",
    allowed_file_types: ["TEXT"],
    fail_fast: false,
    steps: [longLines("a", 2000), longLines("b", 2000), longLines("c", 2000)],
  });
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/many/runs/", {
    token,
    raw: doc(LINES),
    headers: { "content-type": "text/plain" },
  });
  expect(r.status).toBe(201);
  many = { id: r.json.id, json: r.json };
});
afterAll(() => s.close());

const runPath = () => `/api/v1/orgs/acme/runs/${many.id}/`;
const lines = (fs: Finding[]) => fs.map((f) => f.line);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("a run answer carries at most 1000 findings", () => {
  test("the 201: the first 1000, first steps first; every step counts all of its own", async () => {
    const steps = many.json.steps;
    expect(steps.map((x) => x.findings.length)).toEqual([1000, 0, 0]);
    expect(steps.map((x) => x.findings_count)).toEqual([LINES, LINES, LINES]);
    expect(lines(steps[0]!.findings)).toEqual(range(1, 1000));
    expect(many.json.summary).toEqual(expect.objectContaining({ errors: 3 * LINES, steps_failed: 3 }));
  });

  test("GET of the run from the database: the same answer", async () => {
    const r = await call(s, "GET", runPath(), { token });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(many.json);
  });

  test("the list: step summaries with their counts, no findings", async () => {
    const r = await call(s, "GET", "/api/v1/orgs/acme/runs/?workflow=many", { token });
    expect(r.json.results).toHaveLength(1);
    const listed = r.json.results[0];
    expect(listed.steps.map((x: Step) => [x.findings.length, x.findings_count])).toEqual([
      [0, LINES],
      [0, LINES],
      [0, LINES],
    ]);
    expect(listed.summary).toEqual(many.json.summary);
  });
});

describe("GET …/runs/{id}/findings/ pages through all of them", () => {
  test("every finding once, in step order, 200 a page", async () => {
    const seen: [number, number | null][] = [];
    let url: string | null = `${runPath()}findings/?page_size=200`;
    let pages = 0;
    while (url) {
      const r = await call(s, "GET", url.replace(s.url, ""), { token });
      expect(r.status).toBe(200);
      expect(r.json.count).toBe(3 * LINES);
      expect(r.json.results.length).toBeLessThanOrEqual(200);
      for (const f of r.json.results) seen.push([f.step_order, f.line]);
      url = r.json.next;
      pages++;
    }
    expect(pages).toBe(Math.ceil((3 * LINES) / 200));
    expect(seen).toEqual(
      [1, 2, 3].flatMap((order) => range(1, LINES).map((l): [number, number] => [order, l])),
    );
  });

  test("one step, any page: the exact slice, with the finding's own fields", async () => {
    const r = await call(s, "GET", `${runPath()}findings/?step=2&page=3&page_size=7`, { token });
    expect(r.json.count).toBe(LINES);
    expect(lines(r.json.results)).toEqual(range(15, 21));
    expect(r.json.results[0]).toEqual({
      step_id: expect.any(Number),
      step_order: 2,
      severity: "error",
      code: expect.any(String),
      message: expect.any(String),
      path: null,
      line: 15,
      column: expect.any(Number),
      rule: null,
    });
    expect(r.json.next).toBe(`${s.url}${runPath()}findings/?step=2&page=4&page_size=7`);
  });

  test("a page past the end is empty; a run without findings has none", async () => {
    const r = await call(s, "GET", `${runPath()}findings/?page=1000`, { token });
    expect(r.json).toEqual(expect.objectContaining({ count: 3 * LINES, next: null, results: [] }));
  });

  test("400 invalid_request for a step the run does not have, or a bad page size", async () => {
    const bad = await call(s, "GET", `${runPath()}findings/?step=9`, { token });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for step.", [
        { field: "step", code: "invalid", message: "step is the order of one of the run's steps: 1, 2, 3." },
      ]),
    );
    const size = await call(s, "GET", `${runPath()}findings/?page_size=201`, { token });
    expect(size.status).toBe(400);
    expect(size.json.errors[0].field).toBe("page_size");
  });

  test("404 not_found for a run of another org or no run at all", async () => {
    const other = await s.user("olga", "other", "admin");
    const r = await call(s, "GET", `/api/v1/orgs/other/runs/${many.id}/findings/`, { token: other.token });
    expect(r.status).toBe(404);
    expect(r.json).toEqual(errorBody(404, "not_found", "Run not found."));
    const none = await call(s, "GET", "/api/v1/orgs/acme/runs/not-a-run/findings/", { token });
    expect(none.json).toEqual(errorBody(404, "not_found", "Run not found."));
  });
});

describe("reports", () => {
  test("under 10,000 findings a report holds all of them", async () => {
    const r = await call(s, "GET", `${runPath()}report/?format=junit`, { token });
    expect(r.status).toBe(200);
    expect(r.text.match(/ error /g)?.length).toBe(3 * LINES);
    expect(r.text).not.toContain("not in this report");
  });

  test("past 10,000, a report holds the first 10,000 and each format says what it left out", async () => {
    await createWorkflow(s, token, {
      slug: "huge",
      allowed_file_types: ["TEXT"],
      fail_fast: false,
      steps: [longLines("a", 6000), longLines("b", 6000)],
    });
    const run = await call(s, "POST", "/api/v1/orgs/acme/workflows/huge/runs/", {
      token,
      raw: doc(6000),
      headers: { "content-type": "text/plain" },
    });
    expect(run.status).toBe(201);
    const path = `/api/v1/orgs/acme/runs/${run.json.id}/report/`;
    const note = "2000 more findings of step 2 are not in this report";
    const junit = await call(s, "GET", `${path}?format=junit`, { token });
    expect(junit.text.match(/ error text\.line_too_long /g)?.length).toBe(10_000);
    expect(junit.text).toContain(note);
    const sarif = await call(s, "GET", `${path}?format=sarif`, { token });
    expect(sarif.json.runs[0].results).toHaveLength(10_000);
    expect(sarif.json.runs[0].invocations[0].executionSuccessful).toBe(true);
    expect(sarif.json.runs[0].invocations[0].toolExecutionNotifications).toEqual([
      expect.objectContaining({ level: "note", message: { text: expect.stringContaining(note) } }),
    ]);
    const html = await call(s, "GET", `${path}?format=html`, { token });
    expect(html.text).toContain(note);
    const json = await call(s, "GET", `${path}?format=json`, { token });
    expect(json.json.steps.map((x: Step) => [x.findings.length, x.findings_count])).toEqual([
      [6000, 6000],
      [4000, 6000],
    ]);
  });
});

test("`assay validate` reads the findings beyond the run answer: all 4500", async () => {
  const dir = mkdtempSync(join(tmpdir(), "assay-findings-"));
  try {
    writeFileSync(join(dir, "doc.txt"), doc(LINES));
    const p = Bun.spawn(
      [
        process.execPath,
        join(import.meta.dir, "../src/main.ts"),
        "validate",
        "doc.txt",
        "--workflow",
        "many",
        "--org",
        "acme",
        "--server",
        s.url,
        "--token",
        token,
        "--format",
        "json",
      ],
      { cwd: dir, stdout: "pipe", stderr: "pipe", stdin: "ignore" },
    );
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    expect(code).toBe(1);
    const report = JSON.parse(out);
    const steps = report.files[0].run.steps;
    expect(steps.map((x: Step) => x.findings.length)).toEqual([LINES, LINES, LINES]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
