// RelaxNG `<data>` params of the XML Schema datatype library are checked at save: a bad pattern,
// a value the type cannot hold or a facet that does not exist was saved (201) and then failed
// every run, valid document or not (CONTRACT §2a: a bad schema is a 400 at save).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1, sync_wait_ms: 30_000 });
});
afterAll(() => s.close());

const NS = 'xmlns="http://relaxng.org/ns/structure/1.0"';
const XSD_LIB = 'datatypeLibrary="http://www.w3.org/2001/XMLSchema-datatypes"';
const rng = (type: string, params: string) =>
  `<element name="a" ${NS} ${XSD_LIB}><data type="${type}">${params}</data></element>`;
const save = (slug: string, schema: string) =>
  call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug,
      name: slug,
      allowed_file_types: ["XML"],
      steps: [{ name: "rng", validator: "xml_schema", config: { schema_type: "relaxng", schema } }],
    },
  });
const refused = (message: unknown) =>
  errorBody(400, "invalid_request", "The workflow definition is invalid.", [
    { field: "steps[0].config.schema", code: "invalid_schema", message },
  ]);

describe("RelaxNG data params at save", () => {
  test("a pattern that is not a regular expression: 400, nothing saved", async () => {
    const r = await save("badpat", rng("string", '<param name="pattern">[a</param>'));
    expect(r.json).toEqual(
      refused(expect.stringContaining('<data type="string"> on line 1: its params are not valid for string')),
    );
    expect(r.json.errors[0].message).toContain(
      "'[a' of the facet 'pattern' is not a valid regular expression",
    );
    expect(await s.count("workflows")).toBe(0);
  });

  test("a bound the type cannot hold, through an inherited datatypeLibrary: 400", async () => {
    const schema = `<grammar ${NS} ${XSD_LIB}><start><element name="a"><data type="integer"><param name="minInclusive">abc</param></data></element></start></grammar>`;
    const r = await save("badmin", schema);
    expect(r.status).toBe(400);
    expect(r.json.errors[0].message).toContain("'abc' is not a valid value of the atomic type 'xs:integer'");
  });

  test("a facet that is no param (unknown, or enumeration): 400 naming it", async () => {
    expect((await save("nofacet", rng("integer", '<param name="nosuchfacet">1</param>'))).json).toEqual(
      refused(
        'is not a valid RELAXNG: <data type="integer"> on line 1: "nosuchfacet" is not a parameter of integer',
      ),
    );
    expect((await save("enum", rng("string", '<param name="enumeration">x</param>'))).json).toEqual(
      refused(
        'is not a valid RELAXNG: <data type="string"> on line 1: "enumeration" is not a parameter of string',
      ),
    );
  });

  test("good params save and check documents; other datatype libraries are left alone", async () => {
    const r = await save(
      "good",
      rng("integer", '<param name="minInclusive">3</param><param name="maxInclusive">9</param>'),
    );
    expect(r.status).toBe(201);
    const run = (xml: string) =>
      call(s, "POST", "/api/v1/orgs/acme/workflows/good/runs/", {
        token: s.rootToken,
        raw: xml,
        headers: { "content-type": "application/xml" },
      });
    expect((await run("<a>5</a>")).json.status).toBe("succeeded");
    expect((await run("<a>15</a>")).json.status).toBe("failed");
    const pattern = await save("pattern", rng("string", '<param name="pattern">[a-z]+&amp;"x</param>'));
    expect(pattern.status).toBe(201);
    // The built-in library's string and token take no params; libxml2 refuses those itself.
    const builtin = `<element name="a" ${NS}><data type="token"/></element>`;
    expect((await save("builtin", builtin)).status).toBe(201);
  });
});
