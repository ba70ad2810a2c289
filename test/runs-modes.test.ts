// POST …/runs/: the three request modes × file types, base64, charset, classification.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call } from "./helpers/server.ts";

let s: TestServer;
let token: string;
const path = "/api/v1/orgs/acme/workflows/all/runs/";
beforeAll(async () => {
  s = await startTestServerOnce();
  token = (await s.user("exec", "acme", "executor")).token;
  await createWorkflow(s, s.rootToken, {
    slug: "all",
    allowed_file_types: ["JSON", "XML", "YAML", "CSV", "TEXT"],
    steps: [{ name: "well-formed", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());
async function startTestServerOnce() {
  const { startTestServer } = await import("./helpers/server.ts");
  return startTestServer();
}

const SAMPLES = {
  JSON: { type: "application/json", good: '{"a": [1, 2]}', bad: '{"a": [1, 2}' },
  XML: { type: "application/xml", good: "<a><b/></a>", bad: "<a><b></a>" },
  YAML: { type: "application/yaml", good: "a: 1\nb: [1, 2]\n", bad: "a: [1, 2\nb: 3\n" },
  CSV: { type: "text/csv", good: "a,b\n1,2\n", bad: 'a,b\n"1,2\n' },
  TEXT: { type: "text/plain", good: "hello\nworld\n", bad: null },
} as const;

const multipart = (fields: Record<string, string | Blob>) => {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
};

describe("every mode × file type", () => {
  for (const [ft, sample] of Object.entries(SAMPLES)) {
    test(`raw ${ft}: 201, stored byte for byte, classified ${ft}`, async () => {
      const r = await call(s, "POST", path, {
        token,
        raw: sample.good,
        headers: { "content-type": sample.type, "x-filename": `sample.${ft.toLowerCase()}` },
      });
      expect(r.status).toBe(201);
      expect(r.json.status).toBe("succeeded");
      expect(r.json.submission).toEqual(
        expect.objectContaining({
          file_type: ft,
          content_type: sample.type,
          filename: `sample.${ft.toLowerCase()}`,
          size: sample.good.length,
        }),
      );
      const c = await fetch(`${s.url}/api/v1/orgs/acme/runs/${r.json.id}/content/`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(await c.text()).toBe(sample.good);
      // A download of the bytes, whatever was declared (docs/security.md); the run keeps the type.
      expect(c.headers.get("content-type")).toBe("application/octet-stream");
      expect(c.headers.get("content-disposition")).toBe(
        `attachment; filename="sample.${ft.toLowerCase()}"; filename*=UTF-8''sample.${ft.toLowerCase()}`,
      );
    });
    test(`envelope ${ft}: 201 with content_type, filename and metadata`, async () => {
      const r = await call(s, "POST", path, {
        token,
        body: {
          content: sample.good,
          content_type: sample.type,
          filename: "e.dat",
          metadata: { source: "ci" },
        },
      });
      expect(r.status).toBe(201);
      expect(r.json.submission).toEqual(
        expect.objectContaining({ file_type: ft, filename: "e.dat", metadata: { source: "ci" } }),
      );
    });
    test(`multipart ${ft}: 201 from a file part`, async () => {
      const r = await call(s, "POST", path, {
        token,
        raw: multipart({
          file: new File([sample.good], "upload.bin", { type: sample.type }),
          filename: "m.dat",
          metadata: '{"source":"upload"}',
        }),
      });
      expect(r.status).toBe(201);
      expect(r.json.submission).toEqual(
        expect.objectContaining({ file_type: ft, filename: "m.dat", metadata: { source: "upload" } }),
      );
    });
    if (sample.bad) {
      test(`raw ${ft} that is not well-formed: 201, run failed with a positioned finding`, async () => {
        const r = await call(s, "POST", path, {
          token,
          raw: sample.bad,
          headers: { "content-type": sample.type },
        });
        expect(r.status).toBe(201);
        expect(r.json.status).toBe("failed");
        const f = r.json.steps[0].findings[0];
        expect(f).toEqual(expect.objectContaining({ severity: "error", line: expect.any(Number) }));
        expect(r.json.summary).toEqual(
          expect.objectContaining({ errors: expect.any(Number), steps_failed: 1 }),
        );
      });
    }
  }
});

describe("base64 in all three modes", () => {
  const xml = "<note>caf\u00e9</note>";
  const b64 = Buffer.from(xml).toString("base64");
  const check = async (r: Awaited<ReturnType<typeof call>>) => {
    expect(r.status).toBe(201);
    const c = await fetch(`${s.url}/api/v1/orgs/acme/runs/${r.json.id}/content/`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(new Uint8Array(await c.arrayBuffer())).toEqual(new Uint8Array(Buffer.from(xml)));
    expect(r.json.submission.file_type).toBe("XML");
  };
  test("raw with Content-Encoding: base64", async () => {
    await check(
      await call(s, "POST", path, {
        token,
        raw: b64,
        headers: { "content-type": "application/xml", "content-encoding": "base64" },
      }),
    );
  });
  test("envelope with content_encoding base64", async () => {
    await check(
      await call(s, "POST", path, {
        token,
        body: { content: b64, content_type: "application/xml", content_encoding: "base64" },
      }),
    );
  });
  test("multipart: the type comes from the filename's extension when the part has none", async () => {
    const r = await call(s, "POST", path, {
      token,
      raw: multipart({ file: new File(["a: 1\n"], "data.yml") }),
    });
    expect(r.status).toBe(201);
    expect(r.json.submission).toEqual(
      expect.objectContaining({ file_type: "YAML", filename: "data.yml", content_type: "application/yaml" }),
    );
  });
  test("envelope: a string content's type comes from the filename's extension too, as in multipart", async () => {
    // A multipart request is handled the same way as a JSON envelope (the spec, Mode 3).
    const r = await call(s, "POST", path, { token, body: { content: "a: 1\n", filename: "data.yml" } });
    expect(r.status).toBe(201);
    expect(r.json.submission).toEqual(
      expect.objectContaining({ file_type: "YAML", filename: "data.yml", content_type: "application/yaml" }),
    );
    // An explicit content_type wins over the name, in both modes.
    const named = await call(s, "POST", path, {
      token,
      body: { content: "a,b\n", filename: "data.yml", content_type: "text/csv" },
    });
    expect(named.json.submission).toEqual(
      expect.objectContaining({ file_type: "CSV", content_type: "text/csv" }),
    );
  });
  test("multipart with a content_encoding part", async () => {
    await check(
      await call(s, "POST", path, {
        token,
        raw: multipart({
          file: new Blob([b64]),
          content_type: "application/xml",
          content_encoding: "base64",
        }),
      }),
    );
  });
});

describe("content forms and classification", () => {
  test("an object as content is stored as its JSON text and classified JSON", async () => {
    const r = await call(s, "POST", path, { token, body: { content: { a: 1, b: [true] } } });
    expect(r.status).toBe(201);
    expect(r.json.submission).toEqual(
      expect.objectContaining({ file_type: "JSON", content_type: "application/json" }),
    );
    const c = await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/content/`, { token });
    expect(c.text).toBe('{"a":1,"b":[true]}');
  });
  test("an array as content is stored as its JSON text", async () => {
    const r = await call(s, "POST", path, {
      token,
      body: { content: [1, "two"], content_type: "application/json" },
    });
    const c = await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/content/`, { token });
    expect(c.text).toBe('[1,"two"]');
  });
  test("text/plain that is clearly JSON is classified JSON; other text stays TEXT", async () => {
    const j = await call(s, "POST", path, {
      token,
      raw: ' {"x": 1} ',
      headers: { "content-type": "text/plain" },
    });
    expect(j.json.submission.file_type).toBe("JSON");
    const t = await call(s, "POST", path, {
      token,
      raw: "{not json}",
      headers: { "content-type": "text/plain" },
    });
    expect(t.json.submission.file_type).toBe("TEXT");
  });
  test("a JSON body that is not an envelope is a raw JSON submission", async () => {
    const r = await call(s, "POST", path, { token, body: { content: "x", extra: 1 } });
    expect(r.status).toBe(201);
    const c = await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/content/`, { token });
    expect(c.json).toEqual({ content: "x", extra: 1 });
  });
  test("X-Submission-Mode: raw stores an envelope-shaped body as data", async () => {
    const body = '{"content":"x","content_type":"text/plain"}';
    const r = await call(s, "POST", path, {
      token,
      raw: body,
      headers: { "content-type": "application/json", "x-submission-mode": "raw" },
    });
    expect(r.json.submission.file_type).toBe("JSON");
    expect((await call(s, "GET", `/api/v1/orgs/acme/runs/${r.json.id}/content/`, { token })).text).toBe(body);
  });
  test("application/*+json and *+xml map to JSON and XML", async () => {
    const j = await call(s, "POST", path, {
      token,
      raw: "{}",
      headers: { "content-type": "application/ld+json" },
    });
    expect(j.json.submission.file_type).toBe("JSON");
    const x = await call(s, "POST", path, {
      token,
      raw: "<svg/>",
      headers: { "content-type": "image/svg+xml" },
    });
    expect(x.status).toBe(415);
    const a = await call(s, "POST", path, {
      token,
      raw: "<feed/>",
      headers: { "content-type": "application/atom+xml" },
    });
    expect(a.json.submission.file_type).toBe("XML");
  });
  test("charset is honoured: ISO-8859-1 bytes are kept and decoded for validation", async () => {
    const bytes = new Uint8Array([0x3c, 0x61, 0x3e, 0xe9, 0x3c, 0x2f, 0x61, 0x3e]); // <a>é</a> in latin-1
    const r = await call(s, "POST", path, {
      token,
      raw: bytes,
      headers: { "content-type": "application/xml; charset=iso-8859-1" },
    });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
    const c = await fetch(`${s.url}/api/v1/orgs/acme/runs/${r.json.id}/content/`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(new Uint8Array(await c.arrayBuffer())).toEqual(bytes);
  });
  test("binary-safe: bytes that are not UTF-8 survive the trip in a declared charset", async () => {
    const bytes = new Uint8Array([0xff, 0xfe, 0x41, 0x00]);
    const r = await call(s, "POST", path, {
      token,
      raw: bytes,
      headers: { "content-type": "text/plain; charset=windows-1252" },
    });
    expect(r.status).toBe(201);
    const c = await fetch(`${s.url}/api/v1/orgs/acme/runs/${r.json.id}/content/`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(new Uint8Array(await c.arrayBuffer())).toEqual(bytes);
    expect(r.json.submission.size).toBe(4);
  });
});

describe("XML declares its own encoding", () => {
  // The W3C suite's not-wf documents with a bad EncodingDecl (ibm-not-wf-P81 …): the document
  // is not well-formed, which is a finding of a failed run, not a refusal of the request.
  const xmlRun = (raw: string | Uint8Array<ArrayBuffer>) =>
    call(s, "POST", path, { token, raw, headers: { "content-type": "application/xml" } });
  const firstFinding = (r: Awaited<ReturnType<typeof xmlRun>>) => {
    const f = r.json.steps[0].findings[0];
    return { code: f.code, message: f.message, line: f.line, column: f.column, rule: f.rule };
  };
  test("an invalid encoding name is a finding, not a 415", async () => {
    const r = await xmlRun('<?xml version="1.0" encoding="_UTF-8"?><a/>');
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("failed");
    expect(firstFinding(r)).toEqual({
      code: "xml.not_well_formed",
      message: "Invalid XML encoding name",
      line: 1,
      column: 31,
      rule: "xml:well-formed",
    });
  });
  test("an encoding nobody supports is a finding, not a 415", async () => {
    const r = await xmlRun('<?xml version="1.0" encoding="x-no-such-charset"?><a/>');
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("failed");
    expect(firstFinding(r)).toEqual(
      expect.objectContaining({
        code: "xml.not_well_formed",
        message: "Unsupported encoding: x-no-such-charset",
      }),
    );
  });
  test("bytes that are not in the declared encoding are a finding, not a 400", async () => {
    const head = new TextEncoder().encode('<?xml version="1.0" encoding="UTF-8"?>\n<a>');
    const r = await xmlRun(
      new Uint8Array([...head, 0xe9, 0x3c, 0x2f, 0x61, 0x3e]) as Uint8Array<ArrayBuffer>,
    );
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("failed");
    expect(firstFinding(r)).toEqual(expect.objectContaining({ code: "xml.not_well_formed", line: 2 }));
    expect(firstFinding(r).message).toBe("Invalid bytes in character encoding");
  });
  test("a charset parameter the bytes break is still the request's fault: 400", async () => {
    const r = await call(s, "POST", path, {
      token,
      raw: new Uint8Array([0x3c, 0x61, 0x3e, 0xe9, 0x3c, 0x2f, 0x61, 0x3e]),
      headers: { "content-type": "application/xml; charset=utf-8" },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      detail: "The run request is invalid.",
      code: "invalid_request",
      status: 400,
      errors: [{ field: "charset", code: "invalid_encoding", message: "The content is not valid utf-8." }],
    });
  });
  test("a charset parameter or an envelope's string wins over the declaration: libxml2 and Schematron agree", async () => {
    // xml_schema reads bytes (libxml2), schematron the decoded text: both must see café.
    const xsd = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="a"><xs:simpleType><xs:restriction base="xs:string"><xs:enumeration value="caf\u00e9"/></xs:restriction></xs:simpleType></xs:element></xs:schema>`;
    const sch = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:pattern><sch:rule context="a"><sch:assert id="E" test=". = 'caf\u00e9'">got <sch:value-of select="."/></sch:assert></sch:rule></sch:pattern></sch:schema>`;
    await createWorkflow(s, s.rootToken, {
      slug: "cafe",
      allowed_file_types: ["XML"],
      steps: [
        { name: "xsd", validator: "xml_schema", config: { schema_type: "xsd", schema: xsd } },
        { name: "rules", validator: "schematron", config: { schema: sch } },
      ],
    });
    const doc = '<?xml version="1.0" encoding="ISO-8859-1"?><a>caf\u00e9</a>';
    const runs = "/api/v1/orgs/acme/workflows/cafe/runs/";
    const raw = await call(s, "POST", runs, {
      token,
      raw: doc,
      headers: { "content-type": "application/xml; charset=utf-8" },
    });
    const envelope = await call(s, "POST", runs, {
      token,
      body: { content: doc, content_type: "application/xml" },
    });
    for (const r of [raw, envelope]) {
      expect(r.status).toBe(201);
      expect(r.json.steps.map((step: { findings: unknown[] }) => step.findings)).toEqual([[], []]);
      expect(r.json.status).toBe("succeeded");
    }
  });
  test('a latin-1 document with encoding="ISO-8859-1" and no charset parameter is accepted', async () => {
    const head = new TextEncoder().encode('<?xml version="1.0" encoding="ISO-8859-1"?><a>');
    const bytes = new Uint8Array([...head, 0xe9, ...new TextEncoder().encode("</a>")]);
    const r = await call(s, "POST", path, {
      token,
      raw: bytes,
      headers: { "content-type": "application/xml" },
    });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
    // The value reaches validators as é, not mojibake: an assertion on it passes.
    await createWorkflow(s, s.rootToken, {
      slug: "latin",
      allowed_file_types: ["XML"],
      steps: [
        {
          name: "value",
          validator: "assertions",
          config: { rules: [{ id: "e", expr: 'data.a == "\u00e9"', message: "got {{ data.a }}" }] },
        },
      ],
    });
    const a = await call(s, "POST", "/api/v1/orgs/acme/workflows/latin/runs/", {
      token,
      raw: bytes,
      headers: { "content-type": "application/xml" },
    });
    expect(a.json.steps[0].findings).toEqual([]);
    expect(a.json.status).toBe("succeeded");
  });
});
