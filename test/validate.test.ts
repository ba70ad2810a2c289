// `assay validate` as CI runs it: a real process against a real server, for each output format
// and exit code, and `--local` against the same workflow giving the same findings.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, type Socket, createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ReportRun } from "../src/reports/types.ts";
import { runAssay } from "./helpers/cli.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { junitProblems, sarifProblems } from "./unit/reports/schemas.ts";

let s: TestServer;
let token: string;
const dir = mkdtempSync(join(tmpdir(), "assay-validate-"));

/** Runs the CLI in the test's dir (helpers/cli.ts). */
const assay = (args: string[], env: Record<string, string> = {}, timeoutMs?: number) =>
  runAssay(args, { cwd: dir, env, timeoutMs });
const remote = (workflow: string, ...args: string[]) =>
  assay(["validate", "--workflow", workflow, "--org", "acme", "--server", s.url, "--token", token, ...args]);
/** `assay validate` of workflow "orders" against another server's URL, killed after 30 s. */
const remoteTo = (url: string, ...args: string[]) =>
  assay(
    ["validate", "--workflow", "orders", "--org", "acme", "--server", url, "--token", token, ...args],
    {},
    30_000,
  );

const FILES: Record<string, string> = {
  "data/good.json": '{"id": 1, "total": 10}\n',
  "data/bad.json": '{\n  "id": "A-1",\n  "total": 10\n}\n',
  "data/broken.json": '{"id": 1,\n "total": }\n',
  "data/good.data": '{"id": 2, "total": 3}',
  "data/table.csv": "id,total\n1,2\n",
  "notes/clean.txt": "all done\n",
  "notes/todo.txt": "first line\nTODO: finish\n",
  "xml/order.xml": '<order><id>x</id><item sku="a" qty="0"/></order>\n',
  "xml/ok.xml": '<order><id>1</id><item sku="a" qty="2"/></order>\n',
};

async function workflow(body: Record<string, unknown>) {
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: s.rootToken, body });
  if (r.status !== 201) throw new Error(`workflow not created: ${r.text}`);
}

beforeAll(async () => {
  s = await startTestServer();
  token = (await s.user("ci", "acme", "executor")).token;
  for (const [name, text] of Object.entries(FILES)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  await workflow({
    slug: "orders",
    name: "Orders",
    allowed_file_types: ["JSON"],
    fail_fast: false,
    steps: [
      { name: "syntax", validator: "syntax", config: {} },
      {
        name: "schema",
        validator: "json_schema",
        config: {
          schema: { type: "object", required: ["id", "total"], properties: { id: { type: "integer" } } },
        },
      },
      {
        name: "rules",
        validator: "assertions",
        config: {
          rules: [
            { id: "positive", expr: "data.total > 5", message: "total must exceed 5", severity: "warning" },
          ],
        },
      },
    ],
  });
  await workflow({
    slug: "notes",
    name: "Notes",
    allowed_file_types: ["TEXT"],
    steps: [
      {
        name: "no todos",
        validator: "text_rules",
        config: {
          patterns: [{ regex: "TODO", must: "not_match", message: "unfinished work", severity: "warning" }],
        },
      },
    ],
  });
  await workflow({
    slug: "parts",
    name: "Parts",
    allowed_file_types: ["XML"],
    steps: [
      { name: "syntax", validator: "syntax", config: {} },
      {
        name: "xsd",
        validator: "xml_schema",
        config: {
          schema_type: "xsd",
          schema: readFileSync(join(import.meta.dir, "fixtures/validators/order.xsd"), "utf8"),
        },
      },
    ],
  });
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("exit codes and the text summary", () => {
  test("exit 0 and PASS when every run succeeds", async () => {
    const r = await remote("orders", "data/good.json");
    expect(r).toEqual({
      code: 0,
      out: "PASS data/good.json: succeeded (no findings)\n1 file: 1 passed, 0 failed.\n",
      err: "",
    });
  });

  test("exit 1 with one `file:line:column severity code message` line per finding", async () => {
    const r = await remote("orders", "data/good.json", "data/bad.json");
    expect(r.code).toBe(1);
    expect(r.err).toBe("");
    const lines = r.out.trim().split("\n");
    expect(lines[0]).toBe("PASS data/good.json: succeeded (no findings)");
    expect(lines[1]).toBe("FAIL data/bad.json: failed (1 error)");
    expect(lines[2]).toMatch(/^data\/bad\.json:2:9 error json_schema\.type \S.*$/);
    expect(lines[3]).toMatch(
      /^ {2}report: http:\/\/127\.0\.0\.1:\d+\/api\/v1\/orgs\/acme\/runs\/[0-9a-f-]{36}\/report\/\?format=html$/,
    );
    expect(lines[4]).toBe("2 files: 1 passed, 1 failed.");
    const html = await fetch(lines[3]!.slice("  report: ".length), {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(html.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });

  test("user:password in --server is refused before anything is sent, and never printed", async () => {
    const withCredentials = s.url.replace("http://", "http://ciuser:s3cretpw@");
    const before = await s.count("runs");
    const r = await assay([
      "validate",
      "--workflow",
      "orders",
      "--org",
      "acme",
      "--server",
      withCredentials,
      "--token",
      token,
      "data/bad.json",
    ]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: `assay validate: --server ${s.url} carries a user:password, which cannot be sent: the Authorization header carries the token. Remove it from the URL.\nRun "assay validate -h" for help.\n`,
    });
    expect(await s.count("runs")).toBe(before);
  });

  test("--format text --output: the report in the file, the same text summary on stdout", async () => {
    const r = await remote("orders", "data/good.json", "--output", "out/report.txt");
    const text = "PASS data/good.json: succeeded (no findings)\n1 file: 1 passed, 0 failed.\n";
    expect(r).toEqual({ code: 0, out: text, err: "" });
    expect(readFileSync(join(dir, "out/report.txt"), "utf8")).toBe(text);
  });

  test("--fail-on warning turns a warning into exit 1; without it the run passes", async () => {
    const plain = await remote("notes", "notes/todo.txt", "notes/clean.txt");
    expect(plain.code).toBe(0);
    expect(plain.out).toContain("notes/todo.txt:2:1 warning text.");
    const strict = await remote("notes", "notes/todo.txt", "notes/clean.txt", "--fail-on", "warning");
    expect(strict.code).toBe(1);
    expect(strict.out).toContain("FAIL notes/todo.txt: succeeded (1 warning)");
    expect(strict.out).toContain("PASS notes/clean.txt");
  });

  test("--fail-on warning: the JUnit report fails the step that warned, as the exit code does", async () => {
    const strict = await remote(
      "notes",
      "notes/todo.txt",
      "notes/clean.txt",
      "--fail-on",
      "warning",
      "--format",
      "junit",
    );
    expect(strict.code).toBe(1);
    expect(await junitProblems(strict.out)).toEqual([]);
    // One failure in all: the warning's step, with the warning in the failure's text.
    expect(strict.out).toMatch(/<testsuites name="assay" tests="2" failures="1" errors="0"/);
    expect(strict.out).toMatch(
      /<failure message="1 warning \(failing on warnings\)" type="warning">notes\/todo.txt:2:1 warning text\./,
    );
    // Without the option the same warning is output of a passed case, and nothing fails.
    const plain = await remote("notes", "notes/todo.txt", "notes/clean.txt", "--format", "junit");
    expect(plain.code).toBe(0);
    expect(plain.out).toMatch(/failures="0" errors="0"/);
    expect(plain.out).not.toContain("<failure");
    expect(plain.out).toContain("<system-out>notes/todo.txt:2:1 warning text.");
  });

  test("the content type comes from the extension; --content-type overrides it", async () => {
    const unknown = await remote("orders", "data/good.data");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("cannot tell the content type of data/good.data from its extension");
    const forced = await remote("orders", "data/good.data", "--content-type", "application/json");
    expect(forced.code).toBe(0);
  });

  test("exit 2 for a file the workflow refuses, the other files still reported", async () => {
    const r = await remote("orders", "data/table.csv", "data/good.json");
    expect(r.code).toBe(2);
    expect(r.out).toContain(
      "ERROR data/table.csv: 400 file_type_unsupported: This workflow accepts JSON submissions; this one is CSV.",
    );
    expect(r.out).toContain("PASS data/good.json");
    expect(r.out).toContain("2 files: 1 passed, 0 failed, 1 error.");
  });

  test("202 then polling with Retry-After ends with the same results", async () => {
    const r = await remote("orders", "data/bad.json", "--wait", "0");
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^data\/bad\.json:2:9 error json_schema\.type /m);
  });

  test("server and token from ASSAY_SERVER and ASSAY_TOKEN", async () => {
    const r = await assay(["validate", "data/good.json", "--workflow", "orders", "--org", "acme"], {
      ASSAY_SERVER: `${s.url}/`,
      ASSAY_TOKEN: token,
    });
    expect(r.code).toBe(0);
  });
});

describe("errors exit 2", () => {
  test("a bad token: the server's 401 on stderr", async () => {
    const r = await assay([
      "validate",
      "data/good.json",
      "--workflow",
      "orders",
      "--org",
      "acme",
      "--server",
      s.url,
      "--token",
      "assay_nope",
    ]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toStartWith("assay validate: data/good.json: 401 authentication_required: ");
  });
  test("a workflow that does not exist: 404", async () => {
    const r = await remote("nope", "data/good.json");
    expect(r.code).toBe(2);
    expect(r.err).toBe("assay validate: data/good.json: 404 not_found: Workflow not found.\n");
  });
  test("a server that cannot be reached", async () => {
    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const url = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const r = await assay([
      "validate",
      "data/good.json",
      "--workflow",
      "orders",
      "--org",
      "acme",
      "--server",
      url,
      "--token",
      token,
    ]);
    expect(r.code).toBe(2);
    expect(r.out).toStartWith("ERROR data/good.json: network_error: ");
  });
  test("a server that accepts the connection and never answers: exit 2 at --timeout", async () => {
    const sockets: Socket[] = [];
    const silent = createNetServer((c) => sockets.push(c));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    // Killed after 30 s (exit 143): without a deadline of its own the command hung for minutes.
    const r = await remoteTo(url, "data/good.json", "--timeout", "2");
    for (const c of sockets) c.destroy();
    silent.close();
    expect(r.code).toBe(2);
    expect(r.out).toStartWith(
      `ERROR data/good.json: timeout: The server did not answer within 2 s (--timeout): POST ${url}/api/v1/orgs/acme/workflows/orders/runs/\n`,
    );
    expect(r.err).toBe("");
  });
  test("a run the server could not finish (a step over its time limit)", async () => {
    await workflow({
      slug: "hasty",
      name: "Hasty",
      allowed_file_types: ["JSON"],
      steps: [{ name: "hold", validator: "test_hold", config: { timeout_ms: 50 } }],
    });
    // Held by a gate that is never opened: only the time limit ends the step, on any machine.
    writeFileSync(join(dir, "data/big.json"), s.gates.gate().doc());
    const r = await remote("hasty", "data/big.json");
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^ERROR data\/big\.json: timed_out \(no findings\)$/m);
    expect(r.out).toMatch(/^data\/big\.json: step 1 "hold" \(test_hold\) could not finish: .+$/m);
    expect(r.out).toContain("1 file: 0 passed, 0 failed, 1 error.");
  });

  test("bad arguments and missing files", async () => {
    const cases: [string[], string][] = [
      [
        ["validate", "data/good.json", "--org", "acme", "--server", "http://x", "--token", "t"],
        "--workflow is required",
      ],
      [
        ["validate", "data/good.json", "--workflow", "orders", "--org", "acme", "--token", "t"],
        "--server URL (or ASSAY_SERVER) is required",
      ],
      [
        ["validate", "data/good.json", "--workflow", "orders", "--org", "acme", "--server", "http://x"],
        "--token (or ASSAY_TOKEN) is required",
      ],
      [
        ["validate", "data/good.json", "--local", "--workflow-file", "w.yaml", "--format", "pdf"],
        "--format is one of text, json, junit, sarif, html",
      ],
      [
        ["validate", "data/good.json", "--local", "--workflow-file", "w.yaml", "--fail-on", "info"],
        "--fail-on is error or warning",
      ],
      [
        ["validate", "--local", "--workflow-file", "w.yaml"],
        "assay validate: name at least one FILE to validate",
      ],
      [
        ["validate", "data/good.json", "--local", "--workflow-file", "w.yaml", "--server", "http://x"],
        "unknown option --server",
      ],
      [
        ["validate", "data/good.json", "--workflow", "orders", "--server", "http://x", "--token", "t"],
        "--org is required",
      ],
      // The numbers are refused before anything is sent (http://x would be a network error).
      ...(
        [
          ["--jobs", "0", "--jobs is a whole number from 1 to 32"],
          ["--jobs", "33", "--jobs is a whole number from 1 to 32"],
          ["--jobs", "two", "--jobs is a whole number from 1 to 32"],
          ["--wait", "-1", "--wait is a whole number from 0 to 60"],
          ["--wait", "61", "--wait is a whole number from 0 to 60"],
          ["--wait", "1.5", "--wait is a whole number from 0 to 60"],
          ["--timeout", "0", "--timeout is a whole number from 1 to 86400"],
          ["--timeout", "86401", "--timeout is a whole number from 1 to 86400"],
          ["--content-type", "json", '--content-type "json" is not a media type like application/json'],
        ] as const
      ).map(([flag, value, message]): [string[], string] => [
        [
          "validate",
          "data/good.json",
          "--workflow",
          "orders",
          "--org",
          "acme",
          "--server",
          "http://x",
          "--token",
          "t",
          flag,
          value,
        ],
        `assay validate: ${message}\nRun "assay validate -h" for help.\n`,
      ]),
    ];
    const runs = await Promise.all(cases.map(([args]) => assay(args)));
    runs.forEach((r, i) => {
      expect(r.code).toBe(2);
      expect(r.err).toContain(cases[i]![1]);
    });
    const missing = await remote("orders", "data/missing.json");
    expect(missing).toEqual({
      code: 2,
      out: "",
      err: "assay validate: cannot read data/missing.json: no such file\n",
    });
  });
});

describe("formats", () => {
  test("--format json: every file with its verdict and run", async () => {
    const r = await remote("orders", "data/good.json", "data/bad.json", "--format", "json");
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.verdict).toBe("failed");
    expect(j.exit_code).toBe(1);
    expect(j.counts).toEqual({ files: 2, succeeded: 1, failed: 1, error: 0 });
    expect(j.files.map((f: { file: string; verdict: string }) => [f.file, f.verdict])).toEqual([
      ["data/good.json", "succeeded"],
      ["data/bad.json", "failed"],
    ]);
    expect(j.files[1].run.submission.filename).toBe("bad.json");
    expect(j.files[1].run.steps[1].findings[0].code).toBe("json_schema.type");
  });

  test("--format junit --output: a report valid against the JUnit schema, the summary on stdout", async () => {
    const r = await remote(
      "orders",
      "data/good.json",
      "data/bad.json",
      "data/table.csv",
      "--format",
      "junit",
      "--output",
      "out/junit.xml",
    );
    expect(r.code).toBe(2);
    expect(r.out).toContain("3 files: 1 passed, 1 failed, 1 error.");
    const xml = readFileSync(join(dir, "out/junit.xml"), "utf8");
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml.match(/<testsuite /g)?.length).toBe(3);
    expect(xml).toMatch(
      /<failure message="1 error" type="failed">data\/bad\.json:2:9 error json_schema\.type /,
    );
    expect(xml).toContain('<testcase name="submission" classname="data/table.csv"');
    expect(xml).toContain("file_type_unsupported");
  });

  test("--format sarif: SARIF 2.1.0 valid against its schema, located by the path given", async () => {
    const r = await remote("orders", "data/bad.json", "data/broken.json", "--format", "sarif");
    expect(r.code).toBe(1);
    expect(await sarifProblems(r.out)).toEqual([]);
    const run = JSON.parse(r.out).runs[0];
    expect(run.artifacts.map((a: { location: { uri: string } }) => a.location.uri)).toEqual([
      "data/bad.json",
      "data/broken.json",
    ]);
    const first = run.results[0];
    expect(first.ruleId).toBe("json_schema.type");
    expect(first.locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: "data/bad.json", index: 0 },
      region: { startLine: 2, startColumn: 9 },
    });
    expect(run.automationDetails).toEqual({ id: "assay/orders/" });
  });

  test("--format html: one self-contained page for all files", async () => {
    const r = await remote("parts", "xml/order.xml", "xml/ok.xml", "--format", "html");
    expect(r.code).toBe(1);
    expect(r.out).toStartWith("<!doctype html>");
    expect(r.out).toContain("xml/order.xml");
    expect(r.out).not.toMatch(/<script/i);
  });
});

describe("a file that got no run, in the reports", () => {
  // The server refuses a CSV file for a JSON-only workflow (400): the file was never validated.
  let refusal: string;
  beforeAll(async () => {
    const r = await remote("orders", "data/table.csv", "--format", "json");
    const e = JSON.parse(r.out).files[0].error;
    expect(e).toEqual({ status: 400, code: "file_type_unsupported", detail: expect.any(String), errors: [] });
    refusal = `400 file_type_unsupported: ${e.detail}`;
  });

  test("JUnit: one case in error that says not validated and why, with no run, version or findings made up", async () => {
    const r = await remote("orders", "data/good.json", "data/table.csv", "--format", "junit");
    expect([r.code, r.err]).toEqual([2, ""]);
    expect(await junitProblems(r.out)).toEqual([]);
    const suite = r.out.match(/ {2}<testsuite name="data\/table\.csv"[\s\S]*?<\/testsuite>\n/)![0];
    expect(suite.replace(/timestamp="[^"]+"/, 'timestamp="T"')).toBe(
      [
        '  <testsuite name="data/table.csv" tests="1" failures="0" errors="1" skipped="0" time="0.000" timestamp="T" package="assay.orders">',
        '    <properties><property name="workflow" value="orders"/><property name="content_type" value="text/csv"/><property name="error" value="file_type_unsupported"/></properties>',
        `    <testcase name="submission" classname="data/table.csv" time="0.000"><error message="Not validated: ${refusal.replaceAll('"', "&quot;")}" type="file_type_unsupported">Not validated: ${refusal.replaceAll('"', "&quot;")}</error></testcase>`,
        "  </testsuite>",
        "",
      ].join("\n"),
    );
    expect(r.out).toContain('<testsuites name="assay" tests="4" failures="0" errors="1" ');
  });

  test("SARIF: an error notification that says not validated and why; no result, and no run claimed", async () => {
    const r = await remote("orders", "data/bad.json", "data/table.csv", "--format", "sarif");
    expect([r.code, r.err]).toEqual([2, ""]);
    expect(await sarifProblems(r.out)).toEqual([]);
    const run = JSON.parse(r.out).runs[0];
    expect(run.invocations).toEqual([
      {
        executionSuccessful: false,
        toolExecutionNotifications: [
          {
            level: "error",
            message: { text: `data/table.csv: not validated: ${refusal}` },
            locations: [{ physicalLocation: { artifactLocation: { uri: "data/table.csv", index: 1 } } }],
          },
        ],
      },
    ]);
    expect(run.artifacts[1]).toEqual({ location: { uri: "data/table.csv" }, mimeType: "text/csv" });
    expect(
      run.results.map(
        (x: { locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }) =>
          x.locations[0]!.physicalLocation.artifactLocation.uri,
      ),
    ).toEqual(["data/bad.json"]);
    expect(run.properties.runs).toEqual([
      { file: "data/bad.json", run_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: "failed" },
      { file: "data/table.csv", run_id: null, status: null, error: refusal },
    ]);
  });

  test("a server that cannot be reached: valid SARIF and JUnit that say not validated", async () => {
    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const url = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const why = "network_error: could not reach the server (ECONNREFUSED)";
    const sarif = await remoteTo(url, "data/good.json", "--format", "sarif");
    expect([sarif.code, sarif.err]).toEqual([2, ""]);
    expect(await sarifProblems(sarif.out)).toEqual([]);
    const run = JSON.parse(sarif.out).runs[0];
    expect(run.invocations[0].toolExecutionNotifications[0].message.text).toBe(
      `data/good.json: not validated: ${why}`,
    );
    expect(run.properties.runs).toEqual([{ file: "data/good.json", run_id: null, status: null, error: why }]);
    const junit = await remoteTo(url, "data/good.json", "--format", "junit");
    expect([junit.code, junit.err]).toEqual([2, ""]);
    expect(await junitProblems(junit.out)).toEqual([]);
    expect(junit.out).toContain(
      `<testcase name="submission" classname="data/good.json" time="0.000"><error message="Not validated: ${why}" type="network_error">Not validated: ${why}</error></testcase>`,
    );
  });

  test("an unreadable file: exit 2 before anything is sent, and no report is written", async () => {
    const before = await s.count("runs");
    for (const format of ["sarif", "junit"]) {
      const r = await remote(
        "orders",
        "data/good.json",
        "data/missing.json",
        "--format",
        format,
        "--output",
        `out/none.${format}`,
      );
      expect(r).toEqual({
        code: 2,
        out: "",
        err: "assay validate: cannot read data/missing.json: no such file\n",
      });
      expect(existsSync(join(dir, `out/none.${format}`))).toBe(false);
    }
    expect(await s.count("runs")).toBe(before);
  });
});

describe("--local", () => {
  const comparable = (out: string) =>
    JSON.parse(out).files.map(
      (f: { file: string; verdict: string; run: ReportRun | null; error: unknown }) => ({
        file: f.file,
        verdict: f.verdict,
        error: f.error,
        status: f.run?.status,
        file_type: f.run?.submission.file_type,
        summary: f.run?.summary,
        steps: f.run?.steps.map((st) => ({
          order: st.order,
          name: st.name,
          validator: st.validator,
          status: st.status,
          findings: st.findings,
          error: st.error,
        })),
      }),
    );

  for (const [slug, files] of [
    ["orders", ["data/good.json", "data/bad.json", "data/broken.json", "data/table.csv"]],
    ["notes", ["notes/todo.txt", "notes/clean.txt"]],
    ["parts", ["xml/order.xml", "xml/ok.xml"]],
  ] as const) {
    test(`gives the same findings as the server for the exported "${slug}" workflow`, async () => {
      const exported = await assay(["workflows", "export", "acme", slug, ...s.cliArgs]);
      expect(exported.code).toBe(0);
      writeFileSync(join(dir, `${slug}.yaml`), exported.out);
      const server = await remote(slug, ...files, "--format", "json");
      const local = await assay([
        "validate",
        "--local",
        "--workflow-file",
        `${slug}.yaml`,
        ...files,
        "--format",
        "json",
      ]);
      expect(local.err).toBe("");
      expect(local.code).toBe(server.code);
      expect(comparable(local.out)).toEqual(comparable(server.out));
      expect(
        comparable(local.out).some((f: { steps?: { findings: unknown[] }[] }) =>
          f.steps?.some((st) => st.findings.length),
        ),
      ).toBe(true);
    });
  }

  test("text output and exit codes match the server's", async () => {
    const r = await assay(["validate", "--local", "--workflow-file", "orders.yaml", "data/bad.json"]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /^FAIL data\/bad\.json: failed \(1 error\)\ndata\/bad\.json:2:9 error json_schema\.type .+\n1 file: 0 passed, 1 failed\.\n$/,
    );
  });

  test("JUnit and HTML reports name the local definition, not a version 0", async () => {
    const args = ["validate", "--local", "--workflow-file", "orders.yaml", "data/good.json", "--format"];
    const junit = await assay([...args, "junit"]);
    expect([junit.code, junit.err]).toEqual([0, ""]);
    expect(junit.out).toContain('<property name="workflow" value="orders (local)"/>');
    expect(junit.out).not.toContain("v0");
    const html = await assay([...args, "html"]);
    expect([html.code, html.err]).toEqual([0, ""]);
    expect(html.out).toContain("orders (local definition)");
    expect(html.out).not.toContain("version 0");
  });

  test("exit 2 with every problem listed for an invalid workflow document", async () => {
    writeFileSync(
      join(dir, "bad.yaml"),
      "slug: x\nname: X\nallowed_file_types: [JSON]\nsteps:\n  - name: s\n    validator: nope\n",
    );
    const r = await assay(["validate", "--local", "--workflow-file", "bad.yaml", "data/good.json"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      'assay validate: The workflow definition is invalid.\n  steps[0].validator: Unknown validator "nope"; see GET /api/v1/validators/.\n',
    );
  });
});
