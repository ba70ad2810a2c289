// XSD schema sets (issue 23): XSD documents stored per organization (kind "xsd"), included and
// imported by a workflow step by schemaLocation or by namespace, never fetched. The real-world
// case is OASIS UBL 2.1 (test/fixtures/ubl-2.1, with its notice): the invoice schema and the 13
// documents it reaches, stored through the API, and the release's example invoice run against it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
let viewer: string;
const base = "/api/v1/orgs/acme/schemas/";
const workflows = "/api/v1/orgs/acme/workflows/";
const XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"';

beforeAll(async () => {
  s = await startTestServer({ workers: 1, sync_wait_ms: 30_000 });
  author = (await s.user("xa", "acme", "author")).token;
  viewer = (await s.user("xv", "acme", "viewer")).token;
});
afterAll(() => s.close());

const store = (uri: string, schema: unknown, kind = "xsd") =>
  call(s, "POST", base, { token: author, body: { uri, kind, schema } });
const createWorkflow = (slug: string, config: Record<string, unknown>) =>
  call(s, "POST", workflows, {
    token: author,
    body: {
      slug,
      name: slug,
      allowed_file_types: ["XML"],
      steps: [{ name: "xsd", validator: "xml_schema", config }],
    },
  });
const runXml = (slug: string, xml: string) =>
  call(s, "POST", `${workflows}${slug}/runs/`, {
    token: author,
    raw: xml,
    headers: { "content-type": "application/xml" },
  });

describe("storing XSD documents", () => {
  const TYPES = `<xs:schema ${XS} targetNamespace="urn:example:types"><xs:simpleType name="Code"><xs:restriction base="xs:string"><xs:maxLength value="3"/></xs:restriction></xs:simpleType></xs:schema>`;
  test("201 with kind and target_namespace; the list filters by kind", async () => {
    const r = await store("https://schemas.example.com/types.xsd", TYPES);
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(Number),
      uri: "https://schemas.example.com/types.xsd",
      kind: "xsd",
      target_namespace: "urn:example:types",
      schema: TYPES,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    await store("urn:example:json", { type: "object" }, "json_schema");
    const list = await call(s, "GET", `${base}?kind=xsd`, { token: viewer });
    expect(list.status).toBe(200);
    expect(list.json.results.map((x: { uri: string }) => x.uri)).toEqual([
      "https://schemas.example.com/types.xsd",
    ]);
    const all = await call(s, "GET", base, { token: viewer });
    expect(all.json.results.map((x: { kind: string }) => x.kind).sort()).toEqual(["json_schema", "xsd"]);
  });
  test("400 when an XSD is not a string", async () => {
    const r = await store("https://schemas.example.com/a.xsd", { type: "object" });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The schema is invalid.", [
        { field: "schema", code: "invalid", message: "An XSD document is given as a string of XML." },
      ]),
    );
  });
  test("400 when a JSON Schema is a string", async () => {
    const r = await store("https://schemas.example.com/b.json", "<a/>", "json_schema");
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The schema is invalid.", [
        {
          field: "schema",
          code: "invalid",
          message: 'A JSON Schema is a JSON object (for an XSD, give kind "xsd").',
        },
      ]),
    );
  });
  test("400 when the XSD is not well-formed", async () => {
    const r = await store("https://schemas.example.com/c.xsd", `<xs:schema ${XS}>\n<xs:element name="a">`);
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The schema is invalid.", [
        {
          field: "schema",
          code: "invalid_schema",
          message: expect.stringMatching(/^is not well-formed XML: line 2: /),
        },
      ]),
    );
  });
  test("400 when the root is not xs:schema", async () => {
    const r = await store("https://schemas.example.com/d.xsd", "<schema/>");
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The schema is invalid.", [
        {
          field: "schema",
          code: "invalid_schema",
          message:
            "The root element must be schema in the namespace http://www.w3.org/2001/XMLSchema; found schema.",
        },
      ]),
    );
  });
  test("a JSON Schema $ref never resolves to a stored XSD at that URI", async () => {
    const r = await call(s, "POST", workflows, {
      token: author,
      body: {
        slug: "json-to-xsd",
        name: "x",
        allowed_file_types: ["JSON"],
        steps: [
          {
            name: "j",
            validator: "json_schema",
            config: { schema: { $ref: "https://schemas.example.com/types.xsd" } },
          },
        ],
      },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      expect.objectContaining({ field: "steps[0].config.schema", code: "unresolvable_ref" }),
    ]);
  });
  test("400 when the XSD is over 8 MiB (the body limit of this endpoint is larger)", async () => {
    const big = `<xs:schema ${XS}><!--${"x".repeat(8 * 1_048_576)}--></xs:schema>`;
    const r = await store("https://schemas.example.com/big.xsd", big);
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The schema is invalid.", [
        { field: "schema", code: "too_large", message: "An XSD document may hold at most 8388608 bytes." },
      ]),
    );
  });
  test("400 for an unknown kind, nothing stored", async () => {
    const r = await store("https://schemas.example.com/e.rng", "<grammar/>", "relaxng");
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The request is invalid.", [
        { field: "kind", code: "invalid", message: 'must be "json_schema" or "xsd"' },
      ]),
    );
    const list = await call(s, "GET", `${base}?kind=xsd`, { token: viewer });
    expect(list.json.count).toBe(1);
  });
});

describe("a step includes and imports stored documents", () => {
  const MAIN = (imports: string) =>
    `<xs:schema ${XS} xmlns:t="urn:example:types" targetNamespace="urn:example:order" elementFormDefault="qualified">${imports}<xs:element name="order"><xs:complexType><xs:sequence><xs:element name="code" type="t:Code"/></xs:sequence></xs:complexType></xs:element></xs:schema>`;
  const ORDER = (code: string) => `<order xmlns="urn:example:order"><code>${code}</code></order>`;

  test("by namespace alone: the one stored document with that targetNamespace", async () => {
    const r = await createWorkflow("by-ns", {
      schema_type: "xsd",
      schema: MAIN('<xs:import namespace="urn:example:types"/>'),
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.json.steps[0].config.documents)).toEqual(["https://schemas.example.com/types.xsd"]);
    expect((await runXml("by-ns", ORDER("abc"))).json.status).toBe("succeeded");
    const bad = await runXml("by-ns", ORDER("abcd"));
    expect(bad.json.status).toBe("failed");
    expect(bad.json.steps[0].findings).toEqual([
      {
        severity: "error",
        code: "xml.schema_violation",
        message:
          "Element '{urn:example:order}code': [facet 'maxLength'] The value has a length of '4'; this exceeds the allowed maximum length of '3'.",
        path: "/*/*",
        line: 1,
        column: 34,
        rule: "cvc-maxLength-valid",
      },
    ]);
  });

  test("in a schema that declares a default namespace: by namespace alone, or past a location not stored", async () => {
    // The location Assay writes into the import was an attribute in that default namespace
    // (libxml2-wasm's setAttr): libxml2 did not see it, read the import's own or none, and the
    // save was a 400 "The QName value '{urn:example:types}Code' does not resolve to a(n) type
    // definition".
    const withDefault = (imports: string) =>
      MAIN(imports).replace(
        'targetNamespace="urn:example:order"',
        'targetNamespace="urn:example:order" xmlns="urn:example:order"',
      );
    for (const [slug, imports] of [
      ["default-ns-alone", '<xs:import namespace="urn:example:types"/>'],
      [
        "default-ns-past",
        '<xs:import namespace="urn:example:types" schemaLocation="https://schemas.example.com/not-stored.xsd"/>',
      ],
    ]) {
      const r = await createWorkflow(slug, { schema_type: "xsd", schema: withDefault(imports) });
      expect({ slug, status: r.status }).toEqual({ slug, status: 201 });
      expect((await runXml(slug, ORDER("abc"))).json.status).toBe("succeeded");
      const bad = await runXml(slug, ORDER("abcd"));
      expect(bad.json.steps[0].findings.map((f: { rule: string; line: number }) => [f.rule, f.line])).toEqual(
        [["cvc-maxLength-valid", 1]],
      );
    }
  });

  test("a stored document that declares a default namespace, its import past a location not stored", async () => {
    // Its import got a second schemaLocation (in the default namespace): the document Assay
    // served libxml2 was not well-formed.
    const uri = "https://schemas.example.com/order-default-ns.xsd";
    const doc = MAIN(
      '<xs:import namespace="urn:example:types" schemaLocation="https://schemas.example.com/not-stored.xsd"/>',
    ).replace(
      'targetNamespace="urn:example:order"',
      'targetNamespace="urn:example:order" xmlns="urn:example:order"',
    );
    expect((await store(uri, doc)).status).toBe(201);
    const wrapper = `<xs:schema ${XS} targetNamespace="urn:example:wrap"><xs:import namespace="urn:example:order" schemaLocation="${uri}"/></xs:schema>`;
    for (const [slug, config] of [
      ["stored-default-ns", { schema_type: "xsd", schema_uri: uri }],
      ["stored-default-ns-imported", { schema_type: "xsd", schema: wrapper }],
    ] as const) {
      const r = await createWorkflow(slug, config);
      expect({ slug, status: r.status }).toEqual({ slug, status: 201 });
      expect((await runXml(slug, ORDER("abc"))).json.status).toBe("succeeded");
      expect((await runXml(slug, ORDER("abcd"))).json.status).toBe("failed");
    }
  });

  test("a stored document Assay rewrites keeps its lines: an error in it names the line the author wrote", async () => {
    // No XML declaration, the import by namespace alone: served to libxml2 with its location
    // written in, it had the serializer's declaration on a line of its own (every line one down).
    const uri = "https://schemas.example.com/order-lines.xsd";
    const doc = `<xs:schema ${XS} xmlns:t="urn:example:types" xmlns="urn:example:lines" targetNamespace="urn:example:lines">\n<xs:import namespace="urn:example:types"/>\n\n<xs:element name="order" type="t:Nope"/>\n</xs:schema>`;
    expect((await store(uri, doc)).status).toBe(201);
    const r = await createWorkflow("stored-lines", {
      schema_type: "xsd",
      schema: `<xs:schema ${XS}><xs:import namespace="urn:example:lines" schemaLocation="${uri}"/></xs:schema>`,
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      {
        field: "steps[0].config.schema",
        code: "invalid_schema",
        message:
          "is not a valid XSD: line 4: element decl. '{urn:example:lines}order', attribute 'type': The QName value '{urn:example:types}Nope' does not resolve to a(n) type definition.",
      },
    ]);
  });

  test("there, a schema error names the line the author wrote (the schema is read again with the location)", async () => {
    const schema = `<?xml version="1.0"?>\n\n<!-- order -->\n\n<xs:schema ${XS} xmlns:t="urn:example:types" xmlns="urn:example:order" targetNamespace="urn:example:order">\n<xs:import namespace="urn:example:types"/>\n\n<xs:element name="order" type="t:Nope"/>\n</xs:schema>`;
    const r = await createWorkflow("default-ns-line", { schema_type: "xsd", schema });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      {
        field: "steps[0].config.schema",
        code: "invalid_schema",
        message:
          "is not a valid XSD: line 8: element decl. '{urn:example:order}order', attribute 'type': The QName value '{urn:example:types}Nope' does not resolve to a(n) type definition.",
      },
    ]);
  });

  test("by absolute schemaLocation", async () => {
    const r = await createWorkflow("by-location", {
      schema_type: "xsd",
      schema: MAIN(
        '<xs:import namespace="urn:example:types" schemaLocation="https://schemas.example.com/types.xsd"/>',
      ),
    });
    expect(r.status).toBe(201);
    expect((await runXml("by-location", ORDER("abcd"))).json.status).toBe("failed");
  });

  test("an import by namespace alone with nothing stored is libxml2's to judge: 400 when it is used", async () => {
    const unused = await createWorkflow("hint-only", {
      schema_type: "xsd",
      schema: MAIN('<xs:import namespace="urn:example:types"/><xs:import namespace="urn:example:nowhere"/>'),
    });
    expect(unused.status).toBe(201);
    const r = await createWorkflow("unresolved", {
      schema_type: "xsd",
      schema: `<xs:schema ${XS} xmlns:n="urn:example:nowhere"><xs:import namespace="urn:example:nowhere"/><xs:element name="a" type="n:T"/></xs:schema>`,
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema",
          code: "invalid_schema",
          message:
            "is not a valid XSD: line 1: element decl. 'a', attribute 'type': The QName value '{urn:example:nowhere}T' does not resolve to a(n) type definition. (no stored XSD document has the targetNamespace \"urn:example:nowhere\", imported without a schemaLocation)",
        },
      ]),
    );
    expect((await call(s, "GET", `${workflows}unresolved/`, { token: viewer })).status).toBe(404);
  });

  test("400 when an import's schemaLocation and namespace both find nothing stored", async () => {
    const r = await createWorkflow("unresolved", {
      schema_type: "xsd",
      schema: MAIN(
        '<xs:import namespace="urn:example:nowhere" schemaLocation="https://schemas.example.com/nowhere.xsd"/>',
      ),
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema",
          code: "unresolved_reference",
          message:
            'line 1: import of namespace "urn:example:nowhere" ("https://schemas.example.com/nowhere.xsd" is not stored): no stored XSD document has this targetNamespace',
        },
      ]),
    );
  });

  test("400 when an include names a document that is not stored", async () => {
    const r = await createWorkflow("bad-include", {
      schema_type: "xsd",
      schema: `<xs:schema ${XS}><xs:include schemaLocation="https://schemas.example.com/missing.xsd"/></xs:schema>`,
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema",
          code: "unresolved_reference",
          message:
            'line 1: include of "https://schemas.example.com/missing.xsd", which is not a stored XSD document',
        },
      ]),
    );
  });

  test("400 when schema_uri names no stored XSD", async () => {
    const r = await createWorkflow("bad-uri", {
      schema_type: "xsd",
      schema_uri: "https://schemas.example.com/nope.xsd",
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema_uri",
          code: "unknown_schema",
          message: '"https://schemas.example.com/nope.xsd" is not a stored XSD document of this organization',
        },
      ]),
    );
  });

  test("400 when both schema and schema_uri are given", async () => {
    const r = await createWorkflow("both", {
      schema_type: "xsd",
      schema: MAIN(""),
      schema_uri: "https://schemas.example.com/types.xsd",
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema_uri",
          code: "conflict",
          message: "must not be given together with schema: give one or the other",
        },
      ]),
    );
  });

  test("400 when schema_uri is used with RelaxNG", async () => {
    const r = await createWorkflow("rng-uri", {
      schema_type: "relaxng",
      schema_uri: "https://schemas.example.com/types.xsd",
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema_uri",
          code: "invalid",
          message: "applies to XSD only; a RelaxNG schema is given inline in schema",
        },
      ]),
    );
  });

  test("400 when two stored documents claim the imported namespace", async () => {
    await store(
      "https://schemas.example.com/types-v2.xsd",
      `<xs:schema ${XS} targetNamespace="urn:example:types"><xs:simpleType name="Code"><xs:restriction base="xs:string"/></xs:simpleType></xs:schema>`,
    );
    const r = await createWorkflow("ambiguous", {
      schema_type: "xsd",
      schema: MAIN('<xs:import namespace="urn:example:types"/>'),
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema",
          code: "unresolved_reference",
          message:
            'line 1: import of namespace "urn:example:types": 2 stored XSD documents have this targetNamespace (https://schemas.example.com/types-v2.xsd, https://schemas.example.com/types.xsd); name one by its schemaLocation',
        },
      ]),
    );
    // The workflow saved earlier keeps its snapshot and still runs.
    expect((await runXml("by-ns", ORDER("abc"))).json.status).toBe("succeeded");
  });
});

describe("UBL 2.1 (OASIS), a published multi-file XSD set", () => {
  const UBL = "http://docs.oasis-open.org/ubl/os-UBL-2.1/xsd/";
  const dir = new URL("./fixtures/ubl-2.1/", import.meta.url);
  const file = (p: string) => readFileSync(new URL(p, dir), "utf8");
  const invoice = file("xml/UBL-Invoice-2.1-Example.xml");

  test("the invoice schema and the 13 documents it reaches, stored in any order", async () => {
    // Leaves last: storing never compiles, so the order does not matter.
    const stored = [
      ["maindoc/UBL-Invoice-2.1.xsd", file("xsd/maindoc/UBL-Invoice-2.1.xsd")],
      ...readdirSync(new URL("xsd/common/", dir)).map((f) => [`common/${f}`, file(`xsd/common/${f}`)]),
    ];
    for (const [path, text] of stored) {
      const r = await store(`${UBL}${path}`, text);
      expect(r.status).toBe(201);
    }
    const list = await call(s, "GET", `${base}?kind=xsd&page_size=200`, { token: viewer });
    expect(list.json.results.filter((x: { uri: string }) => x.uri.startsWith(UBL))).toHaveLength(14);
  });

  test("a workflow references the root; the example invoice passes, a broken one fails", async () => {
    const w = await createWorkflow("ubl-invoice", {
      schema_type: "xsd",
      schema_uri: `${UBL}maindoc/UBL-Invoice-2.1.xsd`,
    });
    expect(w.status).toBe(201);
    expect(Object.keys(w.json.steps[0].config.documents)).toHaveLength(14);

    const ok = await runXml("ubl-invoice", invoice);
    expect(ok.status).toBe(201);
    expect(ok.json.status).toBe("succeeded");
    expect(ok.json.steps[0].findings).toEqual([]);

    // A date in the wrong format, and an element the invoice does not define (line 14).
    const broken = invoice
      .replace("<cbc:IssueDate>2009-12-15</cbc:IssueDate>", "<cbc:IssueDate>15.12.2009</cbc:IssueDate>")
      .replace("<cac:InvoicePeriod>", "<cbc:Bogus/><cac:InvoicePeriod>");
    const bad = await runXml("ubl-invoice", broken);
    expect(bad.json.status).toBe("failed");
    expect(bad.json.steps[0].findings).toEqual([
      {
        severity: "error",
        code: "xml.schema_violation",
        message:
          "Element '{urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2}IssueDate': '15.12.2009' is not a valid value of the atomic type 'xs:date'.",
        path: "/*/cbc:IssueDate",
        line: 7,
        column: 2,
        rule: "cvc-datatype-valid",
      },
      {
        severity: "error",
        code: "xml.schema_violation",
        message:
          "Element '{urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2}Bogus': This element is not expected. Expected is one of ( {urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2}LineCountNumeric, {urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2}BuyerReference, {urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2}InvoicePeriod, {urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2}OrderReference, {urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2}BillingReference, {urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2}DespatchDocumentReference, {urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2}ReceiptDocumentReference, {urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2}StatementDocumentReference, {urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2}OriginatorDocumentReference, {urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2}ContractDocumentReference ).",
        path: "/*/cbc:Bogus",
        line: 14,
        column: 2,
        rule: "cvc-complex-type.2.4",
      },
    ]);
  });

  test("a workflow whose snapshot outweighs the 1 MiB config limit can still be edited", async () => {
    // The snapshot is the server's: only what the author wrote counts against 1 MiB.
    const r = await call(s, "PATCH", `${workflows}ubl-invoice/`, {
      token: author,
      body: { name: "UBL invoices" },
    });
    expect(r.status).toBe(200);
    expect(r.json.name).toBe("UBL invoices");
    expect(Object.keys(r.json.steps[0].config.documents)).toHaveLength(14);
  });
});
