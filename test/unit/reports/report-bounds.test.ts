// Reports of data that fights back, and of runs larger than a report holds: text printed for
// people shows control characters instead of obeying them, JSON reports stay well-formed, and
// JUnit counts a step's real findings when the report (REPORT_MAX_FINDINGS) leaves some out.
import { describe, expect, test } from "bun:test";
import { escapeHtml, escapeXml, reportJson, visible, wellFormed } from "../../../src/reports/escape.ts";
import { renderJunit } from "../../../src/reports/junit.ts";
import { renderSarif } from "../../../src/reports/sarif.ts";
import { itemOf } from "../../../src/reports/types.ts";
import { finding, run } from "./fixtures.ts";
import { junitProblems, sarifProblems } from "./schemas.ts";

describe("text printed for people", () => {
  test("C0 (but tab), DEL and C1 become \\xNN; lone surrogates U+FFFD; the rest is kept", () => {
    expect(visible("a\u001b[2Jb\u001b]8;;http://x/\u0007c\r\nd\te\u007f\u009b31m\u0085 \ud800 😀 é")).toBe(
      "a\\x1b[2Jb\\x1b]8;;http://x/\\x07c\\x0d\\x0ad\te\\x7f\\x9b31m\\x85 \ufffd 😀 é",
    );
  });
  test("bidirectional controls and line separators become \\uNNNN; marks and other scripts are kept", () => {
    // Shown raw, U+202E would print `ok: total ‮0001 ≠ 1000‬` reversed: a message reading as another.
    expect(
      visible("total \u202e0001\u202c \u2066x\u2069 \u202a\u202b\u202d \u2067\u2068 a\u2028b\u2029c"),
    ).toBe("total \\u202e0001\\u202c \\u2066x\\u2069 \\u202a\\u202b\\u202d \\u2067\\u2068 a\\u2028b\\u2029c");
    expect(visible("\u200e\u200f עברית العربية")).toBe("\u200e\u200f עברית العربية");
  });
});

describe("well-formed JSON reports", () => {
  test("lone surrogates in values and keys become U+FFFD; the text has no \\ud800 escape", () => {
    // JSON.parse makes "__proto__" an own key, as in submission metadata.
    const value = JSON.parse('{"\\ud800": ["x\\udc00y", 1, null, {"__proto__": "\\ud83d"}], "ok": "😀"}');
    const text = reportJson(value);
    expect(text).toBe('{"\ufffd":["x\ufffdy",1,null,{"__proto__":"\ufffd"}],"ok":"😀"}');
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(wellFormed(value))));
  });
  test("DEL and C1 controls are written as \\u escapes: the same data, nothing raw", () => {
    const text = reportJson({ m: "\u001b[2J \u009b31m \u007f" }, 2);
    expect(text).toBe('{\n  "m": "\\u001b[2J \\u009b31m \\u007f"\n}');
    expect(JSON.parse(text).m).toBe("\u001b[2J \u009b31m \u007f");
  });
  test("SARIF of a finding quoting a lone surrogate is valid and well-formed", async () => {
    const r = run();
    r.steps[1]!.findings = [finding({ message: 'property "\ud800" is not allowed', path: "/\ud800" })];
    const text = reportJson(renderSarif([itemOf(r)]), 2);
    expect(text.isWellFormed()).toBe(true);
    expect(text).not.toMatch(/\\ud8/i);
    expect(await sarifProblems(text)).toEqual([]);
    const result = JSON.parse(text).runs[0].results[1];
    expect(result.message.text).toBe('property "\ufffd" is not allowed');
    expect(result.locations[0].logicalLocations).toEqual([{ fullyQualifiedName: "/\ufffd" }]);
  });
});

describe("XML", () => {
  test("C0 that XML 1.0 forbids and lone surrogates become U+FFFD; DEL and C1 character references", () => {
    expect(escapeXml("a\u0000\u0001\u001b\u000b\u000c\t\n\r\u007f\u0085\u009b\udfff\ud800😀")).toBe(
      "a\ufffd\ufffd\ufffd\ufffd\ufffd\t\n\r&#x7F;&#x85;&#x9B;\ufffd\ufffd😀",
    );
  });
  test("the HTML report shows controls as \\xNN, as the CLI does, and noncharacters as U+FFFD", () => {
    // The HTML standard makes every control but ASCII whitespace a parse error, raw or as a
    // reference (&#x85; is even read as windows-1252 "…"), and every noncharacter: a conforming
    // page cannot hold them, so a person reads what they were.
    expect(escapeHtml("a\u0000\u001b[2J\u000b\u000c\t\n\r\u007f\u0085\u009b31m\ud800😀")).toBe(
      "a\\x00\\x1b[2J\\x0b\\x0c\t\n\r\\x7f\\x85\\x9b31m\ufffd😀",
    );
    expect(escapeHtml("\ufdd0\ufdef\ufffe\uffff\u{1fffe}\u{10ffff}\ufdcf\u{1fffd}")).toBe(
      "\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufdcf\u{1fffd}",
    );
  });
  test("the HTML report shows bidirectional controls and line separators as \\uNNNN, as the CLI does", () => {
    expect(escapeHtml('<b>total \u202e0001\u202c</b> \u2066"x"\u2069\u2028')).toBe(
      "&lt;b&gt;total \\u202e0001\\u202c&lt;/b&gt; \\u2066&quot;x&quot;\\u2069\\u2028",
    );
    expect(escapeHtml("\u200f עברית")).toBe("\u200f עברית");
  });
});

describe("JUnit counts when the report leaves findings out", () => {
  /** A run of 3000 + `third` findings of which the report holds only the first of step 2. */
  function bounded(third: number) {
    const r = run();
    r.summary = { ...r.summary!, errors: 2500 + third, warnings: 501 };
    r.steps[1] = { ...r.steps[1]!, findings: [finding()], findings_count: 3000 };
    if (third) r.steps[2] = { ...r.steps[2]!, status: "failed", findings: [], findings_count: third };
    return r;
  }

  test("one step cut: its errors are the run's less the other steps'; the report says what it holds", async () => {
    const xml = renderJunit([itemOf(bounded(0))]);
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).toContain(
      '<failure message="2500 errors (1 of 3000 findings in this report)" type="failed">orders.json:3:7 error json_schema.required missing required property &quot;id&quot;\n2999 more findings of step 2 are not in this report: GET …/runs/{run_id}/findings/?step=2 lists all of them.</failure>',
    );
    expect(xml).toContain(
      '<property name="findings" value="2500 errors, 501 warnings"/><property name="truncated" value="true"/>',
    );
    expect(xml).toContain(
      "    <system-out>This report holds 2 of the run&#39;s 3001 findings (the first, in step order); the counts are the run&#39;s. GET …/runs/{run_id}/findings/ lists all of them.</system-out>\n  </testsuite>",
    );
  });

  test("several steps cut: each says its own number of findings, never a count of what is shown", async () => {
    const xml = renderJunit([itemOf(bounded(4000))]);
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).toContain('<failure message="3000 findings (1 in this report)" type="failed">');
    expect(xml).toContain(
      '<testcase name="3. rules (assertions)" classname="orders.json" time="0.000"><failure message="4000 findings (0 in this report)" type="failed">4000 more findings of step 3 are not in this report: GET …/runs/{run_id}/findings/?step=3 lists all of them.</failure></testcase>',
    );
    expect(xml).toContain('tests="3" failures="2" errors="0" skipped="0"');
    expect(xml).not.toContain('message="0 errors"');
  });

  test("findings capped per step (summary.truncated) are said too; a whole report is unchanged", async () => {
    const capped = run();
    capped.summary = { ...capped.summary!, truncated: true };
    const xml = renderJunit([itemOf(capped)]);
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).toContain('<property name="truncated" value="true"/>');
    expect(xml).toContain(
      "    <system-out>Findings were capped per step: not every problem is listed.</system-out>\n  </testsuite>",
    );
    const whole = renderJunit([itemOf(run())]);
    expect(whole).toContain('<failure message="2 errors" type="failed">');
    expect(whole).not.toContain("truncated");
    expect(whole).not.toContain("    <system-out>");
  });
});
