// libxml2 errors get a path (xmlGetNodePath, O(preceding siblings)) only as many as a step may
// show: with a path for every error, 40,000 invalid siblings took 3.7 s and 160,000 ran past the
// step's limit (src/validators/shared/libxml-errors.ts). This also fails if libxml2-wasm's
// internals that the bound replaces move in an upgrade.
import { beforeAll, describe, expect, test } from "bun:test";
import { libxml, loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { MAX_ERROR_PATHS, withErrorPaths } from "../../../src/validators/shared/libxml-errors.ts";
import { run } from "./helpers.ts";

beforeAll(() => loadLibxml());

const XSD = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="r"><xs:complexType><xs:sequence><xs:element name="a" maxOccurs="unbounded" type="xs:int"/></xs:sequence></xs:complexType></xs:element></xs:schema>`;
const invalid = (n: number) => `<r>${"<a>x</a>".repeat(n)}</r>`;

/** libxml2's error details for `n` invalid siblings, validated with `budget` paths (or the default). */
function details(n: number, budget?: number) {
  const { XmlDocument, XsdValidator, XmlValidateError } = libxml();
  const schema = XmlDocument.fromString(XSD);
  const v = XsdValidator.fromDoc(schema);
  const doc = XmlDocument.fromString(invalid(n));
  try {
    const validate = () => v.validate(doc);
    budget === undefined ? validate() : withErrorPaths(budget, validate);
    return [];
  } catch (e) {
    if (!(e instanceof XmlValidateError)) throw e;
    return e.details;
  } finally {
    doc.dispose();
    v.dispose();
    schema.dispose();
  }
}

describe("paths of libxml2's errors", () => {
  test("the first `budget` errors of a validation get one; every error is still reported", () => {
    const d = details(10, 4);
    expect(d).toHaveLength(10);
    expect(d.map((x) => x.xpath ?? null)).toEqual([
      "/r/a[1]",
      "/r/a[2]",
      "/r/a[3]",
      "/r/a[4]",
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(d[9]).toMatchObject({ line: 1, message: expect.stringContaining("'x' is not a valid value") });
  });

  test("without a budget, up to twice the most findings a step may show", () => {
    expect(MAX_ERROR_PATHS).toBe(20_000);
    expect(details(10).every((x, i) => x.xpath === `/r/a[${i + 1}]`)).toBe(true);
  });

  test("an xml_schema step's findings all have their path, at max_findings", () => {
    const r = run("xml_schema", { schema_type: "xsd", schema: XSD, max_findings: 3 }, invalid(50), "XML");
    expect(r.findings.map((f) => f.path)).toEqual(["/r/a[1]", "/r/a[2]", "/r/a[3]"]);
    expect(r.truncated).toBe(true);
  });
});
