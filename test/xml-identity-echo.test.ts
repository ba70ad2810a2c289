// One bad value in a key/unique field is one finding: libxml2 follows the type failure with "No
// precomputed value available … something strange happened" on the same element, which was
// reported as a second error (summary.errors 2 for one bad value).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1, sync_wait_ms: 30_000 });
});
afterAll(() => s.close());

const XSD = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="urn:t" targetNamespace="urn:t" elementFormDefault="qualified">
  <xs:simpleType name="Code"><xs:restriction base="xs:string"><xs:length value="3"/></xs:restriction></xs:simpleType>
  <xs:element name="root"><xs:complexType><xs:sequence>
    <xs:element name="item" maxOccurs="unbounded"><xs:complexType><xs:sequence><xs:element name="code" type="t:Code"/></xs:sequence></xs:complexType></xs:element>
  </xs:sequence></xs:complexType>
  <xs:unique name="u"><xs:selector xpath="t:item"/><xs:field xpath="t:code"/></xs:unique></xs:element>
</xs:schema>`;

test("a key field's bad value: one finding, one error counted", async () => {
  const created = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug: "codes",
      name: "codes",
      allowed_file_types: ["XML"],
      steps: [{ name: "xsd", validator: "xml_schema", config: { schema_type: "xsd", schema: XSD } }],
    },
  });
  expect(created.status).toBe(201);
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/codes/runs/", {
    token: s.rootToken,
    raw: '<root xmlns="urn:t"><item><code>abcd</code></item><item><code>abc</code></item></root>',
    headers: { "content-type": "application/xml" },
  });
  expect(r.status).toBe(201);
  expect(r.json.summary.errors).toBe(1);
  const findings = r.json.steps[0].findings;
  expect(findings).toHaveLength(1);
  expect(findings[0].message).toContain("The value has a length of '4'");
});
