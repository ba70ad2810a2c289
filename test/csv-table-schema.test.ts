// Table Schema v1 through the API (issue 23): save-time refusals with the field named (every
// new 400 with its whole error object), an empty file as a finding, and a Frictionless data
// package with a foreign key — Frictionless's "Countries and their capitals" example
// (test/fixtures/frictionless/data/country.package.yaml, MIT): the country table is submitted,
// the capital table travels inline in the step config as the package's other resource.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
const workflows = "/api/v1/orgs/acme/workflows/";

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  author = (await s.user("ta", "acme", "author")).token;
});
afterAll(() => s.close());

const save = (slug: string, config: Record<string, unknown>) =>
  call(s, "POST", workflows, {
    token: author,
    body: {
      slug,
      name: slug,
      allowed_file_types: ["CSV"],
      steps: [{ name: "table", validator: "csv_table", config }],
    },
  });
const runCsv = (slug: string, csv: string) =>
  call(s, "POST", `${workflows}${slug}/runs/`, {
    token: author,
    raw: csv,
    headers: { "content-type": "text/csv" },
  });
const refused = (field: string, code: string, message: string) =>
  errorBody(400, "invalid_request", "The workflow definition is invalid.", [
    { field: `steps[0].config.${field}`, code, message },
  ]);
const one = (field: Record<string, unknown>) => ({ schema: { fields: [field] } });

describe("400 at save: what applies to which type", () => {
  const cases: Array<[string, Record<string, unknown>, string, string, string]> = [
    [
      "minLength on an integer",
      one({ name: "qty", type: "integer", constraints: { minLength: 1 } }),
      "schema.fields[0].constraints.minLength",
      "invalid",
      'does not apply to integer fields ("qty")',
    ],
    [
      "pattern on a number",
      one({ name: "price", type: "number", constraints: { pattern: "[0-9]+" } }),
      "schema.fields[0].constraints.pattern",
      "invalid",
      'does not apply to number fields ("price")',
    ],
    [
      "minimum on a boolean",
      one({ name: "ok", type: "boolean", constraints: { minimum: 1 } }),
      "schema.fields[0].constraints.minimum",
      "invalid",
      'does not apply to boolean fields ("ok")',
    ],
    [
      "groupChar on an integer",
      one({ name: "qty", type: "integer", groupChar: "," }),
      "schema.fields[0].groupChar",
      "invalid",
      'applies to number fields only, not integer ("qty")',
    ],
    [
      "trueValues on a string",
      one({ name: "flag", trueValues: ["yes"] }),
      "schema.fields[0].trueValues",
      "invalid",
      'applies to boolean fields only, not string ("flag")',
    ],
    [
      "a format the type does not have",
      one({ name: "where", type: "geopoint", format: "wkt" }),
      "schema.fields[0].format",
      "invalid",
      'format "wkt" is not one of "default", "array", "object" for geopoint fields',
    ],
    [
      "a bound that is not of the type",
      one({ name: "month", type: "yearmonth", constraints: { minimum: "2020-13" } }),
      "schema.fields[0].constraints.minimum",
      "invalid",
      "is not a valid yearmonth",
    ],
    [
      "a bound of a JSON type the field does not read",
      one({ name: "due", type: "date", constraints: { maximum: 20201231 } }),
      "schema.fields[0].constraints.maximum",
      "invalid",
      "is not a valid date: date constraint values are strings, not numbers",
    ],
  ];
  for (const [what, config, field, code, message] of cases)
    test(what, async () => {
      const r = await save("refused", config);
      expect(r.status).toBe(400);
      expect(r.json).toEqual(refused(field, code, message));
    });
});

describe("400 at save: foreign keys and package resources", () => {
  const fields = [
    { name: "id", type: "integer" },
    { name: "parent", type: "integer" },
  ];
  const fk = (reference: Record<string, unknown>, own: string | string[] = "parent") => ({
    schema: { fields, foreignKeys: [{ fields: own, reference }] },
  });
  test("a key field that is not a field", async () => {
    const r = await save("fk", fk({ resource: "", fields: "id" }, "nope"));
    expect(r.json).toEqual(
      refused("schema.foreignKeys[0].fields[0]", "unknown_field", '"nope" is not a field'),
    );
  });
  test("a referenced field that this table does not have", async () => {
    const r = await save("fk", fk({ resource: "", fields: "nope" }));
    expect(r.json).toEqual(
      refused(
        "schema.foreignKeys[0].reference.fields[0]",
        "unknown_field",
        '"nope" is not a field of this table',
      ),
    );
  });
  test("as many referenced fields as fields", async () => {
    const r = await save("fk", fk({ resource: "", fields: ["id", "parent"] }));
    expect(r.json).toEqual(
      refused("schema.foreignKeys[0].reference.fields", "invalid", "must name as many fields as fields (1)"),
    );
  });
  test("a resource the config does not carry", async () => {
    const r = await save("fk", fk({ resource: "parents", fields: "id" }));
    expect(r.json).toEqual(
      refused(
        "schema.foreignKeys[0].reference.resource",
        "unknown_resource",
        '"parents" is not in resources (give the referenced table there; "" is this table)',
      ),
    );
  });
  test("a field the referenced resource does not have", async () => {
    const r = await save("fk", {
      ...fk({ resource: "parents", fields: "code" }),
      resources: [{ name: "parents", data: "id,name\n1,a\n" }],
    });
    expect(r.json).toEqual(
      refused(
        "schema.foreignKeys[0].reference.fields[0]",
        "unknown_field",
        '"code" is not a field of "parents"',
      ),
    );
  });
  test("a referenced resource whose CSV does not parse", async () => {
    const r = await save("fk", {
      ...fk({ resource: "parents", fields: "id" }),
      resources: [{ name: "parents", data: 'id,name\n1,"a\n' }],
    });
    expect(r.json).toEqual(refused("resources[0].data", "invalid", "quoted field is never closed (line 2)"));
  });
  test("a resource whose CSV does not parse, though its schema names the fields", async () => {
    const r = await save("fk", {
      ...fk({ resource: "parents", fields: "id" }),
      resources: [{ name: "parents", data: 'id\n1\n"2\n', schema: { fields: [{ name: "id" }] } }],
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(refused("resources[0].data", "invalid", "quoted field is never closed (line 3)"));
  });
  test("a resource whose CSV does not parse, though no key refers to it yet", async () => {
    const r = await save("fk", {
      schema: { fields },
      resources: [{ name: "parents", data: 'id\n1"x\n' }],
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      refused(
        "resources[0].data",
        "invalid",
        'a quote inside an unquoted field; quote the whole field and double inner quotes ("") (line 2)',
      ),
    );
  });
  test("two resources with one name", async () => {
    const r = await save("fk", {
      schema: { fields },
      resources: [
        { name: "p", data: "id\n1\n" },
        { name: "p", data: "id\n2\n" },
      ],
    });
    expect(r.json).toEqual(refused("resources[1].name", "duplicate", '"p" is used twice'));
  });
});

describe("runs", () => {
  test("an empty file is a source error, not a success", async () => {
    expect((await save("empty", one({ name: "id" }))).status).toBe(201);
    const r = await runCsv("empty", "");
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("failed");
    expect(r.json.steps[0].findings).toEqual([
      {
        severity: "error",
        code: "csv.source_error",
        message: "the source is empty: no header and no rows",
        path: null,
        line: null,
        column: null,
        rule: null,
      },
    ]);
  });

  test("number options and trimmed integers, as Frictionless reads them", async () => {
    const config = {
      schema: {
        fields: [
          { name: "qty", type: "integer" },
          { name: "price", type: "number", groupChar: ".", decimalChar: ",", bareNumber: false },
        ],
      },
    };
    expect((await save("numbers", config)).status).toBe(201);
    const ok = await runCsv("numbers", 'qty,price\n" 01 ","1.234,50 €"\n');
    expect(ok.json.steps[0].findings).toEqual([]);
  });

  test("date and time patterns read as Python's strptime reads them; 24:00:00 as isoparse does", async () => {
    const config = {
      schema: {
        fields: [
          { name: "opens", type: "time", format: "%I:%M" },
          { name: "closes", type: "time", format: "%H%M" },
          { name: "day", type: "date", format: "%d %b %Y" },
          { name: "ends", type: "time" },
        ],
      },
    };
    expect((await save("hours", config)).status).toBe(201);
    const ok = await runCsv("hours", "opens,closes,day,ends\n09:30,930,5 JAN 2024,24:00:00\n");
    expect(ok.json.steps[0].findings).toEqual([]);
    const bad = await runCsv("hours", "opens,closes,day,ends\n13:30,960,5 jax 2024,24:00:01\n");
    expect(bad.json.steps[0].findings.map((f: { code: string; path: string }) => [f.code, f.path])).toEqual([
      ["csv.type_error", "/rows/2/opens"],
      ["csv.type_error", "/rows/2/closes"],
      ["csv.type_error", "/rows/2/day"],
      ["csv.type_error", "/rows/2/ends"],
    ]);
  });

  describe("a Frictionless data package with a foreign key", () => {
    const dir = new URL("./fixtures/frictionless/data/", import.meta.url);
    const pkg = parseYaml(readFileSync(new URL("country.package.yaml", dir), "utf8"));
    const [capital, country] = pkg.resources;
    const countries = readFileSync(new URL("country-3.csv", dir), "utf8");
    const capitals = readFileSync(new URL("capital-3.csv", dir), "utf8");

    test("the package's country table passes against its capitals", async () => {
      const r = await save("countries", {
        schema: country.schema,
        resources: [{ name: "capital", data: capitals, schema: capital.schema }],
      });
      expect(r.status).toBe(201);
      const ok = await runCsv("countries", countries);
      expect(ok.json.status).toBe("succeeded");
      expect(ok.json.steps[0].findings).toEqual([]);
    });

    test("a capital_id with no capital is a foreign key error on its row", async () => {
      const bad = await runCsv("countries", `${countries}6,9,Atlantis,1\n`);
      expect(bad.json.status).toBe("failed");
      expect(bad.json.steps[0].findings).toEqual([
        {
          severity: "error",
          code: "csv.foreign_key_error",
          message: '(capital_id) = (9) is not a value of (id) in resource "capital"',
          path: "/rows/7",
          line: 7,
          column: 1,
          rule: "foreignKeys[0]",
        },
      ]);
    });
  });
});
