// `assay validate` with a document whose content carries terminal control sequences and a lone
// UTF-16 surrogate: the text printed for people shows them escaped, never acts on them; the
// report files keep the data but stay valid (well-formed JSON, XML 1.0).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAssay } from "./helpers/cli.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { junitProblems, sarifProblems } from "./unit/reports/schemas.ts";

let s: TestServer;
let token: string;
const dir = mkdtempSync(join(tmpdir(), "assay-validate-hostile-"));

const assay = (args: string[]) => runAssay(args, { cwd: dir });
const remote = (...args: string[]) =>
  assay(["validate", "--workflow", "hostile", "--org", "acme", "--server", s.url, "--token", token, ...args]);

// Clear screen, an OSC 8 hyperlink, BEL, a C1 CSI (U+009B) and a carriage return in a value the
// assertion message quotes; a duplicate key made of a lone surrogate, quoted by the syntax step.
const HOSTILE_JSON =
  '{"note": "\\u001b[2J\\u001b]8;;http://evil.example/\\u0007click\\u001b]8;;\\u0007 \\u009b31m red\\rX", "\\ud800": 1, "\\ud800": 2}\n';

/**
 * A file whose name itself carries an escape sequence: submitted under a name the server takes
 * (controls as "_"), refused all the same, as XML, by the JSON workflow.
 */
const RED = "data/\u001b[31mred.xml";

beforeAll(async () => {
  s = await startTestServer();
  token = (await s.user("ci", "acme", "executor")).token;
  mkdirSync(join(dir, "data"), { recursive: true });
  writeFileSync(join(dir, "data/hostile.json"), HOSTILE_JSON);
  writeFileSync(join(dir, RED), "<note/>\n");
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug: "hostile",
      name: "Hostile",
      allowed_file_types: ["JSON"],
      fail_fast: false,
      steps: [
        { name: "syntax", validator: "syntax", config: {} },
        {
          name: "rules",
          validator: "assertions",
          config: { rules: [{ id: "note", expr: "data.note == ''", message: "note is {{data.note}}" }] },
        },
      ],
    },
  });
  if (r.status !== 201) throw new Error(`workflow not created: ${r.text}`);
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("text for people: control characters are shown, not obeyed", () => {
  test("finding messages, file names and refusals print with C0/C1 controls escaped as \\xNN", async () => {
    const r = await remote("data/hostile.json", RED);
    expect(r.code).toBe(2);
    expect(r.err).toBe("");
    const lines = r.out.split("\n");
    expect(lines).toHaveLength(7);
    expect(lines[0]).toBe("FAIL data/hostile.json: failed (1 error, 1 warning)");
    expect(lines[1]).toBe(
      'data/hostile.json:1:110 warning json.duplicate_key duplicate key "\ufffd"; the last one wins',
    );
    expect(lines[2]).toBe(
      "data/hostile.json error assertion.failed note is \\x1b[2J\\x1b]8;;http://evil.example/\\x07click\\x1b]8;;\\x07 \\x9b31m red X",
    );
    expect(lines[3]).toMatch(
      /^ {2}report: http:\/\/127\.0\.0\.1:\d+\/api\/v1\/orgs\/acme\/runs\/[0-9a-f-]{36}\/report\/\?format=html$/,
    );
    // The refusal names the file as typed, escaped.
    expect(lines[4]).toStartWith("ERROR data/\\x1b[31mred.xml: 400 file_type_unsupported: ");
    expect(lines.slice(5)).toEqual(["2 files: 0 passed, 1 failed, 1 error.", ""]);
    // Nothing a terminal acts on is left: no C0 but the line breaks, no DEL, no C1.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be printed
    expect(r.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });

  test("the same with --output: the summary on stdout is escaped, the report file keeps the data", async () => {
    const r = await remote("data/hostile.json", "--format", "json", "--output", "out/run.json");
    expect(r.code).toBe(1);
    expect(r.out).toContain("\\x1b[2J\\x1b]8;;http://evil.example/\\x07click");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be printed
    expect(r.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    const j = JSON.parse(readFileSync(join(dir, "out/run.json"), "utf8"));
    expect(j.files[0].run.steps[1].findings[0].message).toBe(
      "note is \u001b[2J\u001b]8;;http://evil.example/\u0007click\u001b]8;;\u0007 \u009b31m red\rX",
    );
  });

  test("an error message on stderr is escaped too", async () => {
    const r = await assay([
      "validate",
      "--workflow",
      "nope",
      "--org",
      "acme",
      "--server",
      s.url,
      "--token",
      token,
      RED,
    ]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: "assay validate: data/\\x1b[31mred.xml: 404 not_found: Workflow not found.\n",
    });
    const missing = await remote("data/\u001b]0;title\u0007.json");
    expect(missing).toEqual({
      code: 2,
      out: "",
      err: "assay validate: cannot read data/\\x1b]0;title\\x07.json: no such file\n",
    });
  });
});

/** The raw text of a JSON report: no lone surrogate, escaped or not, and no raw C1 control. */
function expectWellFormedJson(text: string) {
  expect(text).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/i);
  expect(text.isWellFormed()).toBe(true);
  // Raw DEL and C1 are written as \u00XX escapes.
  expect(text).not.toMatch(/[\u007f-\u009f]/);
}

describe("report files: the data kept, lone surrogates replaced by U+FFFD", () => {
  test("--format json", async () => {
    const r = await remote("data/hostile.json", "--format", "json");
    expect(r.code).toBe(1);
    expectWellFormedJson(r.out);
    const steps = JSON.parse(r.out).files[0].run.steps;
    expect(steps[0].findings[0].message).toBe('duplicate key "\ufffd"; the last one wins');
    expect(steps[1].findings[0].message).toBe(
      "note is \u001b[2J\u001b]8;;http://evil.example/\u0007click\u001b]8;;\u0007 \u009b31m red\rX",
    );
  });

  test("--format sarif", async () => {
    const r = await remote("data/hostile.json", "--format", "sarif");
    expect(r.code).toBe(1);
    expectWellFormedJson(r.out);
    expect(await sarifProblems(r.out)).toEqual([]);
    const results = JSON.parse(r.out).runs[0].results;
    expect(results.map((x: { message: { text: string } }) => x.message.text)).toEqual([
      'duplicate key "\ufffd"; the last one wins',
      "note is \u001b[2J\u001b]8;;http://evil.example/\u0007click\u001b]8;;\u0007 \u009b31m red\rX",
    ]);
  });

  test("--format junit: valid XML 1.0, forbidden controls replaced, C1 as character references", async () => {
    const r = await remote("data/hostile.json", "--format", "junit");
    expect(r.code).toBe(1);
    expect(await junitProblems(r.out)).toEqual([]);
    expect(r.out.isWellFormed()).toBe(true);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: nothing XML 1.0 forbids, no raw C1
    expect(r.out).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/);
    expect(r.out).toContain(
      "<system-out>data/hostile.json:1:110 warning json.duplicate_key duplicate key &quot;\ufffd&quot;; the last one wins</system-out>",
    );
    expect(r.out).toContain(
      '<failure message="1 error" type="failed">data/hostile.json error assertion.failed note is \ufffd[2J\ufffd]8;;http://evil.example/\ufffdclick\ufffd]8;;\ufffd &#x9B;31m red X</failure>',
    );
  });
});

describe("SARIF locations of files named with a backslash (POSIX: part of the name)", () => {
  test("`back\\slash.json` and `back/slash.json` are two artifacts; each result points at its own file", async () => {
    mkdirSync(join(dir, "back"), { recursive: true });
    writeFileSync(join(dir, "back\\slash.json"), '{"a": 1, "a": 2}\n');
    writeFileSync(join(dir, "back/slash.json"), '{"b": 1, "b": 2}\n');
    const r = await remote("back\\slash.json", "back/slash.json", "--format", "sarif");
    // Exit 1: the workflow's assertion fails too (no "note"); only the duplicate keys matter here.
    expect([r.code, r.err]).toEqual([1, ""]);
    const run = JSON.parse(r.out).runs[0];
    expect(run.artifacts.map((a: { location: { uri: string } }) => a.location.uri)).toEqual([
      "back%5Cslash.json",
      "back/slash.json",
    ]);
    expect(
      run.results
        .filter((x: { ruleId: string }) => x.ruleId === "json.duplicate_key")
        .map((x: { message: { text: string }; locations: { physicalLocation: unknown }[] }) => [
          x.message.text,
          x.locations[0]!.physicalLocation,
        ]),
    ).toEqual([
      [
        'duplicate key "a"; the last one wins',
        {
          artifactLocation: { uri: "back%5Cslash.json", index: 0 },
          region: { startLine: 1, startColumn: 10 },
        },
      ],
      [
        'duplicate key "b"; the last one wins',
        { artifactLocation: { uri: "back/slash.json", index: 1 }, region: { startLine: 1, startColumn: 10 } },
      ],
    ]);
  });
});
