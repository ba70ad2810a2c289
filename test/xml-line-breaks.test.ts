// A lone CR ends a line in XML (XML 1.0 §2.11 makes it a LF) and in our positions
// (docs/validators.md), but libxml2 counts LFs only: the syntax and xml_schema steps reported
// line 1 for an error on line 3 where schematron said line 3.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loneCrAsLf } from "../src/validators/shared/xml.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1, sync_wait_ms: 30_000 });
  const XSD = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="r"><xs:complexType><xs:sequence><xs:element name="a" type="xs:int" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element></xs:schema>`;
  for (const [slug, step] of [
    ["syntax", { name: "wf", validator: "syntax", config: {} }],
    ["xsd", { name: "xsd", validator: "xml_schema", config: { schema_type: "xsd", schema: XSD } }],
  ] as const) {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: { slug, name: slug, allowed_file_types: ["XML"], steps: [step] },
    });
    expect(r.status).toBe(201);
  }
});
afterAll(() => s.close());

const firstFinding = async (slug: string, xml: string) => {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: xml,
    headers: { "content-type": "application/xml" },
  });
  expect(r.status).toBe(201);
  return r.json.steps[0].findings[0];
};

describe("lone CR line breaks in XML", () => {
  test("not well-formed on line 3: line 3 (was 1)", async () => {
    const f = await firstFinding("syntax", "<r>\r<a>1</a>\r  <a>2</b>\r</r>");
    expect(f).toMatchObject({ code: "xml.not_well_formed", line: 3 });
  });

  test("a schema violation on line 3: line 3 and its column (was line 1, no column)", async () => {
    const f = await firstFinding("xsd", "<r>\r<a>1</a>\r  <a>x</a>\r</r>");
    expect(f).toMatchObject({ code: "xml.schema_violation", line: 3, column: 3 });
  });

  test("CRLF and LF documents keep their lines", async () => {
    expect(await firstFinding("xsd", "<r>\r\n<a>1</a>\r\n  <a>x</a>\r\n</r>")).toMatchObject({
      line: 3,
      column: 3,
    });
    expect(await firstFinding("xsd", "<r>\n<a>1</a>\n  <a>x</a>\n</r>")).toMatchObject({
      line: 3,
      column: 3,
    });
  });
});

describe("loneCrAsLf", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  test("a lone CR becomes LF; CRLF, and UTF-16 input, are left as they are", () => {
    expect(new TextDecoder().decode(loneCrAsLf(bytes("a\rb\r\nc\r")))).toBe("a\nb\r\nc\n");
    const same = bytes("a\nb");
    expect(loneCrAsLf(same)).toBe(same);
    const utf16 = new Uint8Array([0xff, 0xfe, 0x3c, 0x00, 0x0d, 0x00]);
    expect(loneCrAsLf(utf16)).toBe(utf16);
    const utf16NoBom = new Uint8Array([0x3c, 0x00, 0x72, 0x00, 0x0d, 0x00]);
    expect(loneCrAsLf(utf16NoBom)).toBe(utf16NoBom);
  });
});
