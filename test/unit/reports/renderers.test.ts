import { describe, expect, test } from "bun:test";
import { escapeXml } from "../../../src/reports/escape.ts";
import { renderHtml } from "../../../src/reports/html.ts";
import { renderJunit } from "../../../src/reports/junit.ts";
import { countsText, findingLine } from "../../../src/reports/lines.ts";
import { fileUri, renderSarif } from "../../../src/reports/sarif.ts";
import { itemOf } from "../../../src/reports/types.ts";
import { HOSTILE, finding, run } from "./fixtures.ts";
import { junitProblems, sarifProblems } from "./schemas.ts";

describe("finding lines", () => {
  test("file:line:column severity code message, degrading when the position is unknown", () => {
    expect(findingLine("a/b.json", finding())).toBe(
      'a/b.json:3:7 error json_schema.required missing required property "id"',
    );
    expect(findingLine("b.json", finding({ column: null }))).toStartWith("b.json:3 error ");
    expect(findingLine("b.json", finding({ line: null, column: null }))).toStartWith("b.json error ");
  });
  test("a message with newlines stays on one line", () => {
    expect(findingLine("x", finding({ message: "first\n  second\r\nthird" }))).toEndWith(
      "first second third",
    );
  });
  test("counts name only what is there", () => {
    expect(countsText(run().summary)).toBe("2 errors, 1 warning");
    expect(countsText({ errors: 0, warnings: 0, infos: 1 })).toBe("1 info");
    expect(countsText(null)).toBe("no findings");
  });
});

describe("escaping", () => {
  test("markup, quotes and characters XML cannot carry are neutralised", () => {
    expect(escapeXml(HOSTILE)).toBe(
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39; \ufffd\ufffd \ufffd ]]&gt; --&gt; &lt;!--",
    );
    expect(escapeXml("😀 é")).toBe("😀 é"); // a valid surrogate pair is kept
  });
});

describe("JUnit XML", () => {
  test("a testsuite per run, a testcase per step, findings in the failure; valid against the schema", async () => {
    const xml = renderJunit([
      itemOf(run()),
      itemOf(run({ id: "01900000-0000-7000-8000-000000000002", status: "succeeded" })),
    ]);
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml.match(/<testsuite /g)?.length).toBe(2);
    expect(xml.match(/<testcase /g)?.length).toBe(6);
    expect(xml).toContain('<testsuites name="assay" tests="6" failures="2" errors="0" time="0.044">');
    expect(xml).toContain(
      '<failure message="2 errors" type="failed">orders.json:3:7 error json_schema.required missing required property &quot;id&quot;\norders.json error json_schema.type must be integer</failure>',
    );
    // The reason is the element's text too: GitLab shows an outcome's text, never its message.
    expect(xml).toContain(
      '<skipped message="Not run: an earlier step did not pass (fail_fast).">Not run: an earlier step did not pass (fail_fast).</skipped>',
    );
    expect(xml).toContain("<system-out>orders.json:1:1 warning syntax.duplicate_key");
  });
  test("a step in error and a run that ended without a step to blame are errors", async () => {
    const r = run({ status: "error", error: "The submission content was purged." });
    r.steps = r.steps.map((s) => ({ ...s, status: "skipped", findings: [] }));
    const crashed = run({ status: "error", error: "boom" });
    crashed.steps[1] = {
      ...crashed.steps[1]!,
      status: "error",
      error: "Step time limit (5000 ms) exceeded.",
      findings: [],
    };
    const xml = renderJunit([itemOf(r), itemOf(crashed)]);
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).toContain(
      '<testcase name="run" classname="orders.json" time="0.022"><error message="The submission content was purged." type="error">The submission content was purged.</error></testcase>',
    );
    expect(xml).toContain(
      '<error message="Step time limit (5000 ms) exceeded." type="error">Step time limit (5000 ms) exceeded.</error>',
    );
    expect(xml.match(/<testcase name="run"/g)?.length).toBe(1);
    // The steps after were not run because the run ended, whatever fail_fast says: the report
    // names that reason, not fail_fast (a workflow with fail_fast false read "(fail_fast)").
    expect(xml).toContain(
      '<skipped message="Not run: the run ended in error: boom.">Not run: the run ended in error: boom.</skipped>',
    );
    expect(xml).toContain(
      '<skipped message="Not run: the run ended in error: The submission content was purged.">Not run: the run ended in error: The submission content was purged.</skipped>',
    );
    expect(xml).not.toContain("fail_fast");
  });
  test("checked against Jenkins' own junit-10.xsd too: a time past milliseconds is refused there", async () => {
    const xml = renderJunit([itemOf(run())]);
    // Jenkins' schema (SUREFIRE_TIME) allows at most three decimals in a suite's time; ours any.
    const problems = await junitProblems(xml.replace(/(<testsuite [^>]*time="[\d.]+)"/, '$15"'));
    expect(problems.length).toBe(1);
    expect(problems[0]).toStartWith("jenkins: ");
    expect(problems[0]).toContain("time");
  });
  test("hostile text in names and findings still yields valid XML", async () => {
    const r = run({ submission: { filename: HOSTILE, content_type: "text/plain", file_type: "TEXT" } });
    r.steps[1]!.findings = [finding({ message: HOSTILE, code: HOSTILE })];
    r.steps[1]!.name = HOSTILE;
    const xml = renderJunit([itemOf(r)]);
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).not.toContain("<script>");
  });
});

describe("SARIF 2.1.0", () => {
  test("rules from codes, results located by file, line and column; valid against the schema", async () => {
    const log = renderSarif([itemOf(run())]);
    expect(await sarifProblems(JSON.stringify(log))).toEqual([]);
    const r = JSON.parse(JSON.stringify(log.runs[0]));
    expect(r.tool.driver.rules.map((x: { id: string }) => x.id)).toEqual([
      "syntax.duplicate_key",
      "json_schema.required",
      "json_schema.type",
    ]);
    expect(r.results[1]).toEqual({
      ruleId: "json_schema.required",
      ruleIndex: 1,
      level: "error",
      message: { text: 'missing required property "id"' },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: "orders.json", index: 0 },
            region: { startLine: 3, startColumn: 7 },
          },
          logicalLocations: [{ fullyQualifiedName: "/items/0" }],
        },
      ],
      properties: {
        run_id: "01900000-0000-7000-8000-000000000001",
        step: "schema",
        step_order: 2,
        validator: "json_schema",
        rule: "#/required",
      },
    });
    expect(r.results[0].level).toBe("warning");
    // No line: placed at line 1, as GitHub code scanning needs a region (test/reports-formats.test.ts).
    expect(r.results[2].locations[0].physicalLocation.region).toEqual({ startLine: 1 });
    expect(r.artifacts).toEqual([
      { location: { uri: "orders.json" }, mimeType: "application/json", properties: { file_type: "JSON" } },
    ]);
    expect(r.invocations).toEqual([{ executionSuccessful: true }]);
    expect(r.automationDetails).toEqual({ id: "assay/orders/" });
  });
  test("paths become relative URI references; unfinished steps become notifications", async () => {
    expect(fileUri("data dir/a#1.json")).toBe("data%20dir/a%231.json");
    // A backslash left in a path is part of a name (labelOf has turned Windows' into "/").
    expect(fileUri("data dir\\a#1.json")).toBe("data%20dir%5Ca%231.json");
    const crashed = run({
      status: "error",
      submission: { filename: HOSTILE, content_type: "bogus", file_type: "TEXT" },
    });
    crashed.steps[1] = { ...crashed.steps[1]!, status: "error", error: "crashed", findings: [] };
    const log = renderSarif([itemOf(crashed)]);
    expect(await sarifProblems(JSON.stringify(log))).toEqual([]);
    const inv = JSON.parse(JSON.stringify(log.runs[0])).invocations[0];
    expect(inv.executionSuccessful).toBe(false);
    expect(inv.toolExecutionNotifications[0].message.text).toContain(
      'step 2 "schema" (json_schema) could not finish: crashed',
    );
  });
});

describe("SARIF of a run whose findings were capped", () => {
  test("a note says not every problem is listed; the run still executed successfully", async () => {
    const r = run();
    r.summary = { ...r.summary!, truncated: true };
    const log = renderSarif([itemOf(r)]);
    expect(await sarifProblems(JSON.stringify(log))).toEqual([]);
    const inv = JSON.parse(JSON.stringify(log.runs[0])).invocations[0];
    expect(inv).toEqual({
      executionSuccessful: true,
      toolExecutionNotifications: [
        {
          level: "note",
          message: { text: "orders.json: findings were capped per step: not every problem is listed." },
          locations: [{ physicalLocation: { artifactLocation: { uri: "orders.json", index: 0 } } }],
        },
      ],
    });
    // Not capped: no note.
    expect(JSON.parse(JSON.stringify(renderSarif([itemOf(run())]).runs[0])).invocations).toEqual([
      { executionSuccessful: true },
    ]);
  });
});

describe("SARIF of a run not finished yet", () => {
  test.each(["queued", "running"] as const)("%s: not a clean log, a notification says so", async (status) => {
    const r = run({ status });
    r.steps = r.steps.map((st) => ({ ...st, status: st.order === 1 ? "passed" : "pending", findings: [] }));
    const log = renderSarif([itemOf(r)]);
    expect(await sarifProblems(JSON.stringify(log))).toEqual([]);
    const inv = JSON.parse(JSON.stringify(log.runs[0])).invocations[0];
    expect(inv.executionSuccessful).toBe(false);
    expect(inv.toolExecutionNotifications.map((n: { message: { text: string } }) => n.message.text)).toEqual([
      `orders.json: the run is still ${status}: findings of the steps not finished are not in this report.`,
    ]);
  });
});

describe("HTML", () => {
  test("self-contained: inline style, no script, no outside resource", () => {
    const html = renderHtml([itemOf(run())], { generatedAt: "2025-01-02T00:00:00Z" });
    expect(html).toStartWith("<!doctype html>");
    expect(html).toContain("<style>");
    expect(html).not.toMatch(/<script|<link|<img|src=|@import|url\(/i);
    expect(html).toContain("default-src 'none'");
    expect(html).toContain('<td class="loc">orders.json:3:7</td>');
  });
  test("every piece of text is escaped", () => {
    const r = run({
      submission: { filename: HOSTILE, content_type: HOSTILE, file_type: "TEXT" },
      error: HOSTILE,
    });
    r.steps[1]!.findings = [finding({ message: HOSTILE, code: HOSTILE, path: HOSTILE })];
    r.steps[1]!.name = HOSTILE;
    const html = renderHtml([itemOf(r)]);
    expect(html).not.toContain("<script>");
    expect(html).not.toContain('alert("x")');
    expect(html.split("&lt;script&gt;").length - 1).toBeGreaterThanOrEqual(6);
  });
});
