// GET …/runs/{run_id}/report/ against a real server for a run larger than a report holds
// (REPORT_MAX_FINDINGS) and for findings quoting a lone UTF-16 surrogate.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { REPORT_MAX_FINDINGS } from "../src/reports/routes.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { junitProblems, sarifProblems } from "./unit/reports/schemas.ts";

let s: TestServer;
let bigRun: string;
let keysRun: string;
const LINES = 5000;

const report = (id: string, format: string) =>
  call(s, "GET", `/api/v1/orgs/acme/runs/${id}/report/?format=${format}`, { token: s.rootToken });

async function workflow(body: Record<string, unknown>) {
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: s.rootToken, body });
  if (r.status !== 201) throw new Error(`workflow not created: ${r.text}`);
}

async function submit(workflowSlug: string, content: string, contentType: string, filename: string) {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${workflowSlug}/runs/`, {
    token: s.rootToken,
    raw: content,
    headers: {
      "content-type": contentType,
      "x-filename": filename,
      "x-submission-mode": "raw",
      prefer: "wait=60",
    },
  });
  if (r.status !== 201) throw new Error(`run not created: ${r.status} ${r.text}`);
  return r.json.id as string;
}

const everyLine = (severity: string) => ({
  regex: "x",
  must: "not_match",
  message: `no x (${severity})`,
  severity,
});

beforeAll(async () => {
  s = await startTestServer();
  // Steps 1 and 2 fill the report (5000 + 5000 = REPORT_MAX_FINDINGS); step 3's 5000 errors and
  // 5000 warnings are all left out of it.
  await workflow({
    slug: "big",
    name: "Big",
    allowed_file_types: ["TEXT"],
    fail_fast: false,
    steps: [
      {
        name: "one",
        validator: "text_rules",
        config: { max_findings: 10_000, patterns: [everyLine("error")] },
      },
      {
        name: "two",
        validator: "text_rules",
        config: { max_findings: 10_000, patterns: [everyLine("error")] },
      },
      {
        name: "three",
        validator: "text_rules",
        config: { max_findings: 10_000, patterns: [everyLine("error"), everyLine("warning")] },
      },
    ],
  });
  await workflow({
    slug: "keys",
    name: "Keys",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  bigRun = await submit("big", "x\n".repeat(LINES), "text/plain", "big.txt");
  keysRun = await submit("keys", '{"\\ud800": 1, "\\ud800": 2}\n', "application/json", "keys.json");
}, 120_000);
afterAll(() => s.close());

describe("a run with more findings than a report holds", () => {
  test("junit: each step's failure counts its real errors; the suite says the report is cut", async () => {
    expect(REPORT_MAX_FINDINGS).toBe(2 * LINES);
    const r = await report(bigRun, "junit");
    expect(r.status).toBe(200);
    expect(await junitProblems(r.text)).toEqual([]);
    expect(r.text).toContain('tests="3" failures="3" errors="0" skipped="0"');
    expect(r.text).toContain('<property name="findings" value="15000 errors, 5000 warnings"/>');
    expect(r.text).toContain('<property name="truncated" value="true"/>');
    expect(r.text).toContain('<testcase name="1. one (text_rules)" classname="big.txt" ');
    expect(r.text).toMatch(
      /<testcase name="1\. one \(text_rules\)"[^>]*><failure message="5000 errors" type="failed">/,
    );
    expect(r.text).toMatch(
      /<testcase name="2\. two \(text_rules\)"[^>]*><failure message="5000 errors" type="failed">/,
    );
    expect(r.text).toMatch(
      /<testcase name="3\. three \(text_rules\)"[^>]*><failure message="5000 errors \(0 of 10000 findings in this report\)" type="failed">10000 more findings of step 3 are not in this report: GET …\/runs\/\{run_id\}\/findings\/\?step=3 lists all of them\.<\/failure><\/testcase>/,
    );
    expect(r.text).toContain(
      "    <system-out>This report holds 10000 of the run&#39;s 20000 findings (the first, in step order); the counts are the run&#39;s. GET …/runs/{run_id}/findings/ lists all of them.</system-out>\n  </testsuite>",
    );
    expect(r.text).not.toContain('message="0 errors"');
  });
});

describe("findings quoting a lone surrogate", () => {
  test("json and sarif reports are well-formed: U+FFFD, no \\ud800 escape", async () => {
    const json = await report(keysRun, "json");
    expect(json.status).toBe(200);
    expect(json.text).not.toMatch(/\\ud8/i);
    expect(json.json.steps[0].findings[0].message).toBe('duplicate key "\ufffd"; the last one wins');
    const sarif = await report(keysRun, "sarif");
    expect(sarif.text).not.toMatch(/\\ud8/i);
    expect(await sarifProblems(sarif.text)).toEqual([]);
    expect(sarif.json.runs[0].results[0].message.text).toBe('duplicate key "\ufffd"; the last one wins');
  });
  test("junit holds U+FFFD in its place", async () => {
    const r = await report(keysRun, "junit");
    expect(await junitProblems(r.text)).toEqual([]);
    expect(r.text).toContain(
      "<system-out>keys.json:1:15 warning json.duplicate_key duplicate key &quot;\ufffd&quot;; the last one wins</system-out>",
    );
  });
});
