// GET …/runs/{run_id}/report/ checked against each format's own definition, for runs of every
// validator kind whose findings quote hostile text (markup, `]]>`, quotes, C0 controls, lone
// surrogates, bidirectional marks, newlines, long strings): SARIF with Ajv against the OASIS
// SARIF 2.1.0 schema and GitHub code scanning's rules, JUnit XML against the JUnit schema with
// counts that match the run, HTML in Chromium (payloads render as text), and the same findings in
// every format.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import Ajv from "ajv-draft-04";
import addFormats from "ajv-formats";
import { hasChromium, launch } from "./browser/browser.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { junitProblems } from "./unit/reports/schemas.ts";

const SCRIPT = "<script>alert(1)</script>";
const IMG = "<img src=x onerror=alert(1)>";
/** What a submission can make a finding quote. */
const HOSTILE = `${SCRIPT} & "q" 'a' ]]> \u0000\u0001\u0008\u000b\u001f \u007f\u0085\u009b \ufdd0\u{1fffe} \ud800 lone \udc00 \u202eRTL\u200f ok\nnew\r\nline ${"x".repeat(3000)}`;
/** For XML and CSV documents, which cannot carry what XML forbids or lone surrogates as text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: exactly the characters meant
const PRINTABLE = HOSTILE.replace(/[\u0000-\u0008\u000b\u001f]/g, "").replace(/[\ud800-\udfff]/g, "?");
const FILENAME = `${IMG}&"q']]>.json`;

let s: TestServer;
/** Run ids by what they hold. */
const runs: Record<string, string> = {};

async function submit(workflow: string, contentType: string, raw: string, filename: string) {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${workflow}/runs/`, {
    token: s.rootToken,
    raw,
    headers: {
      "content-type": contentType,
      "x-filename": filename,
      "x-submission-mode": "raw",
      prefer: "wait=30",
    },
  });
  if (r.status !== 201) throw new Error(`run not created: ${r.status} ${r.text}`);
  return r.json.id as string;
}

const report = (id: string, format: string) =>
  call(s, "GET", `/api/v1/orgs/acme/runs/${id}/report/?format=${format}`, { token: s.rootToken });

beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "j",
    allowed_file_types: ["JSON"],
    fail_fast: false,
    steps: [
      { name: "syntax", validator: "syntax", config: {} },
      {
        name: "schema",
        validator: "json_schema",
        config: {
          schema: { type: "object", additionalProperties: false, properties: { name: { maxLength: 3 } } },
        },
      },
      // A rule about the whole document: its finding has no line.
      {
        name: "cel",
        validator: "assertions",
        config: { rules: [{ id: "r1", expr: "data.name == 'a'", message: "bad {{ data.name }}" }] },
      },
      {
        name: "text",
        validator: "text_rules",
        config: { patterns: [{ regex: "script", must: "not_match", message: 'no <script> & ]]> "here"' }] },
      },
    ],
  });
  await createWorkflow(s, s.rootToken, {
    slug: "x",
    allowed_file_types: ["XML"],
    fail_fast: false,
    steps: [
      { name: "syntax", validator: "syntax", config: {} },
      {
        name: "xsd",
        validator: "xml_schema",
        config: {
          schema_type: "xsd",
          schema: `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="a"><xs:complexType><xs:attribute name="v" type="xs:integer"/></xs:complexType></xs:element></xs:schema>`,
        },
      },
      {
        name: "sch",
        validator: "schematron",
        config: {
          schema: `<schema xmlns="http://purl.oclc.org/dsdl/schematron"><pattern><rule context="/a"><assert test="@v = '1'">v is <value-of select="@v"/></assert></rule></pattern></schema>`,
        },
      },
      {
        name: "cel",
        validator: "assertions",
        config: { rules: [{ id: "r1", expr: "false", message: "v {{ data.a['@v'] }}" }] },
      },
    ],
  });
  await createWorkflow(s, s.rootToken, {
    slug: "c",
    allowed_file_types: ["CSV"],
    fail_fast: false,
    steps: [
      { name: "syntax", validator: "syntax", config: {} },
      {
        name: "table",
        validator: "csv_table",
        config: {
          schema: {
            fields: [
              { name: "a", type: "integer" },
              { name: "b", constraints: { maxLength: 2 } },
            ],
          },
        },
      },
    ],
  });
  // The value and a key quote the hostile text (JSON escapes carry its controls and surrogates).
  runs.json = await submit(
    "j",
    "application/json",
    JSON.stringify({ name: HOSTILE, [HOSTILE]: 1 }, null, 1),
    FILENAME,
  );
  runs.jsonSyntax = await submit(
    "j",
    "application/json",
    `{"a": "${PRINTABLE.replace(/["\\\n\r]/g, "")}" <&]]> }`,
    "bad.json",
  );
  const attr = PRINTABLE.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
  runs.xml = await submit("x", "application/xml", `<a v="${attr}"/>`, "a&b.xml");
  runs.xmlSyntax = await submit("x", "application/xml", "<a><![CDATA[ ]]> ]]> <b x='&'></a", "s.xml");
  const cell = `"${PRINTABLE.replace(/"/g, '""')}"`;
  runs.csv = await submit("c", "text/csv", `a,b\n${cell},${cell}\n`, "t.csv");
}, 60_000);
afterAll(() => s.close());

interface Finding {
  code: string;
  message: string;
  severity: string;
  line: number | null;
}
async function findingsOf(id: string): Promise<Finding[]> {
  const r = await report(id, "json");
  return r.json.steps.flatMap((st: { findings: Finding[] }) => st.findings);
}

describe("SARIF", () => {
  const schemaFile = join(import.meta.dir, "fixtures/schemas/sarif-schema-2.1.0.json");
  let validate: ReturnType<Ajv["compile"]>;
  beforeAll(async () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    validate = ajv.compile(JSON.parse(await Bun.file(schemaFile).text()));
  });

  test("valid against the OASIS SARIF 2.1.0 schema (Ajv) for every validator kind and hostile text", async () => {
    for (const [what, id] of Object.entries(runs)) {
      const r = await report(id, "sarif");
      expect(r.status).toBe(200);
      const ok = validate(JSON.parse(r.text));
      expect({ what, errors: ok ? null : validate.errors }).toEqual({ what, errors: null });
      // Well-formed for strict parsers: no lone surrogate escape, no raw C1 control.
      expect(r.text).not.toMatch(/(?<!\\)(?:\\\\)*\\ud[89a-f]/i);
    }
  });

  test("what GitHub code scanning needs: one run, $schema, version, ruleId, level, uri and startLine ≥ 1", async () => {
    let lineless = 0;
    for (const [what, id] of Object.entries(runs)) {
      const log = (await report(id, "sarif")).json;
      expect(log.$schema).toMatch(/^https:\/\//);
      expect(log.version).toBe("2.1.0");
      expect(log.runs).toHaveLength(1);
      const run = log.runs[0];
      const ruleIds = run.tool.driver.rules.map((x: { id: string }) => x.id);
      for (const res of run.results) {
        const loc = res.locations?.[0]?.physicalLocation;
        const where = { what, ruleId: res.ruleId };
        expect({ ...where, known: ruleIds.includes(res.ruleId) }).toEqual({ ...where, known: true });
        expect(run.tool.driver.rules[res.ruleIndex].id).toBe(res.ruleId);
        expect(["error", "warning", "note"]).toContain(res.level);
        expect(typeof loc?.artifactLocation?.uri).toBe("string");
        expect(loc.artifactLocation.uri.length).toBeGreaterThan(0);
        // GitHub places a result by its region (region.startLine is required there): a finding
        // about the whole document (no line) is placed at line 1 of its file.
        expect({ ...where, startLine: loc.region?.startLine >= 1 }).toEqual({ ...where, startLine: true });
        if (res.ruleId === "assertion.failed") lineless++;
      }
    }
    expect(lineless).toBe(2);
  });
});

describe("JUnit XML", () => {
  test("well-formed and valid against the JUnit schema; counts are the run's steps", async () => {
    for (const [what, id] of Object.entries(runs)) {
      const r = await report(id, "junit");
      expect({ what, problems: await junitProblems(r.text) }).toEqual({ what, problems: [] });
      const run = (await report(id, "json")).json;
      const failed = run.steps.filter((st: { status: string }) => st.status === "failed").length;
      expect(r.text).toContain(
        `tests="${run.steps.length}" failures="${failed}" errors="0" skipped="${run.steps.length - failed - run.summary.steps_passed}"`,
      );
      // The forbidden characters are replaced, never written raw or as references.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: exactly what XML 1.0 forbids
      expect(r.text).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
      const refs = [...r.text.matchAll(/&#(x?)([0-9a-f]+);/gi)].map((m) =>
        Number.parseInt(m[2]!, m[1] ? 16 : 10),
      );
      expect(refs.filter((c) => c < 0x20 && ![9, 10, 13].includes(c))).toEqual([]);
    }
  });
});

describe("the same findings in every format", () => {
  test("SARIF results, JUnit failure lines and HTML rows: one per finding, same codes in the same order", async () => {
    for (const [what, id] of Object.entries(runs)) {
      const codes = (await findingsOf(id)).map((f) => f.code);
      expect(codes.length).toBeGreaterThan(0);
      const sarif = (await report(id, "sarif")).json.runs[0].results.map((x: { ruleId: string }) => x.ruleId);
      const junit = [...(await report(id, "junit")).text.matchAll(/<failure [^>]*>([^<]*)<\/failure>/g)]
        .flatMap((m) => m[1]!.split("\n"))
        .map((l) => / (?:error|warning|info) (\S+) /.exec(l)?.[1]);
      const html = [...(await report(id, "html")).text.matchAll(/<td class="code">([^<]*)<\/td>/g)].map(
        (m) => m[1],
      );
      expect({ what, sarif, junit, html }).toEqual({ what, sarif: codes, junit: codes, html: codes });
    }
  });
});

/**
 * Code points the HTML standard makes a parse error wherever they stand in the input stream
 * (control-character-, noncharacter- and surrogate-in-input-stream parse errors; NUL too): a
 * conforming page holds none of them, raw or as a character reference.
 */
function htmlParseErrorCodePoints(html: string): string[] {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: exactly the characters meant
  const bad = /[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f]|\p{Noncharacter_Code_Point}|\p{Cs}/u;
  const raw = [...html].filter((c) => bad.test(c));
  const refs = [...html.matchAll(/&#(x?)([0-9a-f]+);/gi)]
    .map((m) => String.fromCodePoint(Number.parseInt(m[2]!, m[1] ? 16 : 10)))
    .filter((c) => bad.test(c) || c === "\r");
  return [...raw, ...refs].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`);
}

describe("HTML report", () => {
  test("no code point the HTML standard makes a parse error, for every validator kind and hostile text", async () => {
    for (const [what, id] of Object.entries(runs)) {
      const r = await report(id, "html");
      expect({ what, bad: htmlParseErrorCodePoints(r.text) }).toEqual({ what, bad: [] });
    }
    // Controls are shown as the CLI shows them, for people to read.
    expect((await report(runs.json!, "html")).text).toContain(
      "\\x00\\x01\\x08\\x0b\\x1f \\x7f\\x85\\x9b \ufffd\ufffd",
    );
  });
});

describe.skipIf(!hasChromium)("HTML report in Chromium", () => {
  test("payloads in findings and file names render as text: no element, no script, UTF-8, strict CSP", async () => {
    const browser = await launch();
    try {
      const ctx = await browser.newContext({ extraHTTPHeaders: { authorization: `Bearer ${s.rootToken}` } });
      const page = await ctx.newPage();
      const dialogs: string[] = [];
      page.on("dialog", (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      for (const what of ["json", "xml", "csv"]) {
        const resp = await page.goto(`${s.url}/api/v1/orgs/acme/runs/${runs[what]}/report/?format=html`);
        expect(resp!.headers()["content-security-policy"]).toStartWith(
          "default-src 'none'; style-src 'unsafe-inline';",
        );
        const seen = await page.evaluate(() => ({
          charset: document.characterSet,
          scripts: document.scripts.length,
          images: document.images.length,
          handlers: [...document.querySelectorAll("*")].filter((e) =>
            [...e.attributes].some((a) => a.name.startsWith("on")),
          ).length,
          text: document.body.textContent ?? "",
        }));
        expect({ what, ...seen, text: seen.text.includes(SCRIPT) }).toEqual({
          what,
          charset: "UTF-8",
          scripts: 0,
          images: 0,
          handlers: 0,
          text: true,
        });
        // The right-to-left override is shown, not obeyed.
        expect(seen.text.toLowerCase()).toContain("\\u202e");
        if (what === "json") expect(seen.text).toContain(IMG);
      }
      expect(dialogs).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
