// Where findings stand, through a sync run and through `assay validate --local`, on inputs where
// positions go wrong: emoji (two UTF-16 code units), é, tabs, CRLF and lone CR (line ends), NEL and
// U+2028 (no line end in any format), a BOM (no column), UTF-16 content, JSON Pointer escapes, a
// CSV field over lines, a YAML stream. Every position below was counted by hand (docs/validators.md
// "Positions": 1-based, columns in UTF-16 code units); the two paths must give the same findings.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAssay } from "./helpers/cli.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const dir = mkdtempSync(join(tmpdir(), "assay-positions-"));
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const XSD = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="r"><xs:complexType><xs:sequence><xs:element name="i" type="xs:int" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element></xs:schema>`;
const SCH = `<schema xmlns="http://purl.oclc.org/dsdl/schematron"><pattern><rule context="i"><assert test=". = '1'">bad</assert></rule></pattern></schema>`;
const text = {
  name: "text",
  validator: "text_rules",
  config: { patterns: [{ regex: "X", must: "not_match", message: "X" }] },
};
const syntax = { name: "syntax", validator: "syntax", config: {} };
const STEPS: Record<string, Record<string, unknown>[]> = {
  JSON: [
    syntax,
    {
      name: "js",
      validator: "json_schema",
      config: {
        schema: {
          properties: { a: { type: "integer" }, "a/b": { type: "integer" }, "m~n": { type: "integer" } },
          items: { type: "integer" },
        },
      },
    },
    text,
  ],
  YAML: [
    { name: "js", validator: "json_schema", config: { schema: { properties: { a: { type: "integer" } } } } },
    {
      name: "cel",
      validator: "assertions",
      config: { rules: [{ id: "has_a", expr: "has(data.a)", message: "no a" }] },
    },
  ],
  XML: [
    { name: "xsd", validator: "xml_schema", config: { schema_type: "xsd", schema: XSD } },
    { name: "sch", validator: "schematron", config: { schema: SCH } },
    text,
  ],
  CSV: [
    {
      name: "csv",
      validator: "csv_table",
      config: {
        schema: {
          fields: [
            { name: "a", type: "integer" },
            { name: "b", type: "string" },
          ],
        },
      },
    },
    {
      name: "cel",
      validator: "assertions",
      config: { rules: [{ id: "pos", expr: "row.a != 'x'", message: "x" }] },
    },
    text,
  ],
};
const MIME: Record<string, string> = {
  JSON: "application/json",
  YAML: "application/yaml",
  XML: "application/xml",
  CSV: "text/csv",
};
const EXT: Record<string, string> = { JSON: "json", YAML: "yaml", XML: "xml", CSV: "csv" };
const utf16 = (t: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(t, "utf16le")]);

// [file, type, content, findings as "step code line:column path"]
const CASES: [string, string, string | Buffer, string[]][] = [
  [
    "bom-crlf-cr",
    "JSON",
    '\ufeff{"😀": 1,\r\n "a": "x", "a/b": "X",\r"m~n": "\u2028", "\u0085": 0}',
    [
      "js json_schema.type 2:7 /a",
      "js json_schema.type 2:19 /a~1b",
      "js json_schema.type 3:8 /m~0n",
      "text text.pattern_forbidden 2:20 null",
    ],
  ],
  [
    "string-break",
    "JSON",
    '{"😀": "a\r\nb"}',
    ["syntax json.syntax_error 1:10 null", "js json.syntax_error 1:10 null"],
  ],
  [
    "items",
    "JSON",
    '[1,\n\t"😀X", "x"]',
    ["js json_schema.type 2:2 /1", "js json_schema.type 2:9 /2", "text text.pattern_forbidden 2:5 null"],
  ],
  [
    "stream",
    "YAML",
    '\ufeffa: 1\r\n---\r\n😀: 1\ra: x\n---\n# c\n  b: "\u2028"\n',
    ["js json_schema.type 4:4 /a", "cel assertion.failed 7:3 null"],
  ],
  ["utf16", "YAML", utf16("a: 1\n---\n😀: é\n"), ["cel assertion.failed 3:1 null"]],
  [
    "bom-crlf-cr",
    "XML",
    "\ufeff<r>\r\n<i>1</i>😀<i>x</i>\r<i>X</i>\u0085<i>1</i>\u2028<i>2</i></r>",
    [
      "xsd xml.schema_violation 1:1 /r",
      "xsd xml.schema_violation 2:11 /r/i[2]",
      "xsd xml.schema_violation 3:1 /r/i[3]",
      "sch schematron.failed_assert 2:11 /r/i[2]",
      "sch schematron.failed_assert 3:1 /r/i[3]",
      "sch schematron.failed_assert 3:19 /r/i[5]",
      "text text.pattern_forbidden 3:4 null",
    ],
  ],
  [
    "utf16",
    "XML",
    utf16("<r>\n😀é<i>x</i></r>"),
    [
      "xsd xml.schema_violation 1:1 /r",
      "xsd xml.schema_violation 2:4 /r/i",
      "sch schematron.failed_assert 2:4 /r/i",
    ],
  ],
  [
    "quoted-lines",
    "CSV",
    '\ufeffa,b\r\n1,"😀\nX"\r\nx,😀\rx,1\n0,"\u2028"\n1,😀,',
    [
      "csv csv.type_error 4:1 /rows/3/a",
      "csv csv.type_error 5:1 /rows/4/a",
      "csv csv.extra_cell 7:6 /rows/6",
      "cel assertion.failed 4:1 /rows/3",
      "cel assertion.failed 5:1 /rows/4",
      "text text.pattern_forbidden 3:1 null",
    ],
  ],
  [
    "utf16",
    "CSV",
    utf16('a,b\n"1\n",😀\nx,é'),
    ["csv csv.type_error 4:1 /rows/3/a", "cel assertion.failed 4:1 /rows/3"],
  ],
];

const brief = (run: {
  steps: { name: string; findings: { code: string; line: number; column: number; path: string }[] }[];
}) =>
  run.steps.flatMap((st) => st.findings.map((f) => `${st.name} ${f.code} ${f.line}:${f.column} ${f.path}`));

test("a sync run and assay validate --local put every finding at the same, hand-counted place", async () => {
  for (const [type, steps] of Object.entries(STEPS)) {
    const wf = { slug: `pos-${type.toLowerCase()}`, allowed_file_types: [type], fail_fast: false, steps };
    await createWorkflow(s, s.rootToken, wf);
    writeFileSync(join(dir, `${wf.slug}.yaml`), JSON.stringify({ ...wf, name: wf.slug }));
  }
  for (const [name, type, content, expected] of CASES) {
    const file = `${name}.${EXT[type]}`;
    writeFileSync(join(dir, file), content);
    const slug = `pos-${type.toLowerCase()}`;
    const api = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
      token: s.rootToken,
      raw: typeof content === "string" ? content : new Uint8Array(content),
      headers: { "content-type": MIME[type] as string },
    });
    expect([file, api.status]).toEqual([file, 201]);
    expect([file, brief(api.json)]).toEqual([file, expected]);
    const local = await runAssay(
      ["validate", "--local", "--workflow-file", `${slug}.yaml`, "--format", "json", file],
      {
        cwd: dir,
      },
    );
    expect([file, brief(JSON.parse(local.out).files[0].run)]).toEqual([file, expected]);
  }
});
