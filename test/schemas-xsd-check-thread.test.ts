// A stored XSD document is parsed on the workflow check thread, as a stored JSON Schema is, within
// ASSAY_CHECK_TIMEOUT_MS: it was parsed on the HTTP thread, and an 8 MB one held every request
// 0.68 s (docs/security.md). Its answers are the ones the parse in place gave.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const XS = "http://www.w3.org/2001/XMLSchema";
const SCHEMAS = "/api/v1/orgs/acme/schemas/";
let s: TestServer;
let author: string;

/** A well-formed XSD of `n` element declarations in namespace urn:big. */
function xsd(n: number) {
  const parts = [`<xs:schema xmlns:xs="${XS}" targetNamespace="urn:big">`];
  for (let i = 0; i < n; i++) parts.push(`<xs:element name="e${i}" type="xs:string"/>`);
  parts.push("</xs:schema>");
  return parts.join("\n");
}
const store = (uri: string, schema: string) =>
  call(s, "POST", SCHEMAS, { token: author, body: { uri, kind: "xsd", schema } });
const invalidSchema = (code: string, message: unknown) => ({
  detail: "The schema is invalid.",
  code: "invalid_request",
  status: 400,
  errors: [{ field: "schema", code, message }],
});

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
});
afterAll(() => s.close());

test("201 with its targetNamespace, 400 not well-formed and 400 another root: each parsed on the thread", async () => {
  const before = s.deps.draftChecker.offloaded;
  const ok = await store("https://example.com/a.xsd", xsd(3));
  expect([ok.status, ok.json.target_namespace]).toEqual([201, "urn:big"]);
  const broken = await store("https://example.com/b.xsd", `<xs:schema xmlns:xs="${XS}">\n<xs:element>`);
  expect([broken.status, broken.json]).toEqual([
    400,
    invalidSchema(
      "invalid_schema",
      "is not well-formed XML: line 2: Premature end of data in tag element line 2",
    ),
  ]);
  const other = await store("https://example.com/c.xsd", "<schema/>");
  expect([other.status, other.json]).toEqual([
    400,
    invalidSchema("invalid_schema", `The root element must be schema in the namespace ${XS}; found schema.`),
  ]);
  const replaced = await call(s, "PUT", `${SCHEMAS}${ok.json.id}/`, {
    token: author,
    body: { uri: "https://example.com/a.xsd", kind: "xsd", schema: xsd(4).replace("urn:big", "urn:b2") },
  });
  expect([replaced.status, replaced.json.target_namespace]).toEqual([200, "urn:b2"]);
  expect(s.deps.draftChecker.offloaded).toBe(before + 4);
});

test("400 too_large for an XSD over 8 MiB, refused before the thread", async () => {
  const before = s.deps.draftChecker.offloaded;
  const big = xsd(1).padEnd(8 * 1_048_576 + 1, " ");
  const r = await store("https://example.com/huge.xsd", big);
  expect([r.status, r.json]).toEqual([
    400,
    invalidSchema("too_large", "An XSD document may hold at most 8388608 bytes."),
  ]);
  expect(s.deps.draftChecker.offloaded).toBe(before);
});

test("400 too_complex past the time limit, nothing stored", async () => {
  // 8 MB parsed in 0.68 s on the 2-core machine of docs/benchmarks.md: 68 times the 10 ms limit
  // (the setting's least), as the JSON Schema test's chain is 80 times its limit.
  const slow = await startTestServer({ check_timeout_ms: 10 });
  try {
    const token = (await slow.user("bob", "acme", "author")).token;
    const before = slow.deps.draftChecker.offloaded;
    const put = (uri: string, schema: string) =>
      call(slow, "POST", SCHEMAS, { token, body: { uri, kind: "xsd", schema } });
    const r = await put("https://example.com/big.xsd", xsd(180_000));
    expect([r.status, r.json]).toEqual([
      400,
      invalidSchema(
        "too_complex",
        "The XSD document was not read within 0.01 s: split it into smaller documents that include or import each other.",
      ),
    ]);
    expect(slow.deps.draftChecker.offloaded).toBe(before + 1);
    expect((await call(slow, "GET", SCHEMAS, { token })).json.count).toBe(0);
  } finally {
    await slow.close();
  }
});
