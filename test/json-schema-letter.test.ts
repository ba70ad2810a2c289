// JSON Schema to the letter through the API (issue #23): boolean schemas, stored schemas read
// from their own URI and in their own draft, custom meta-schemas with $vocabulary, and findings
// that name the most specific cause.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
});
afterAll(() => s.close());

const store = (uri: string, schema: unknown) =>
  call(s, "POST", "/api/v1/orgs/acme/schemas/", { token: s.rootToken, body: { uri, schema } });

async function workflow(slug: string, config: Record<string, unknown>) {
  await createWorkflow(s, s.rootToken, {
    slug,
    allowed_file_types: ["JSON"],
    steps: [{ name: "schema", validator: "json_schema", config }],
  });
}

async function run(slug: string, doc: unknown) {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: JSON.stringify(doc),
    headers: { "content-type": "application/json", "x-submission-mode": "raw" },
  });
  expect(r.status).toBe(201);
  return r.json;
}

const brief = (r: { steps: Array<{ findings: Array<Record<string, unknown>> }> }) =>
  r.steps[0].findings.map(({ code, message, path, rule }) => ({ code, message, path, rule }));

describe("schemas", () => {
  test("true and false are root schemas (was: 400)", async () => {
    await workflow("bool-true", { schema: true });
    await workflow("bool-false", { schema: false });
    expect((await run("bool-true", { any: 1 })).status).toBe("succeeded");
    expect(brief(await run("bool-false", 1))).toEqual([
      {
        code: "json_schema.false_schema",
        message: "no value is allowed here (the schema is false)",
        path: "",
        rule: "#",
      },
    ]);
  });

  test("a stored schema's relative $ref resolves against its own URI (was: https://assay.invalid/)", async () => {
    expect(
      (await store("https://schemas.example.com/types/zip.json", { type: "string", pattern: "^[0-9]{5}$" }))
        .status,
    ).toBe(201);
    const address = { type: "object", properties: { zip: { $ref: "zip.json" } } };
    expect((await store("https://schemas.example.com/types/address.json", address)).status).toBe(201);
    await workflow("address", { schema: { $ref: "https://schemas.example.com/types/address.json" } });
    expect((await run("address", { zip: "12345" })).status).toBe("succeeded");
    expect(brief(await run("address", { zip: "1234" }))).toEqual([
      expect.objectContaining({ code: "json_schema.pattern", path: "/zip" }),
    ]);
  });

  test("a stored draft-7 schema with a location-independent $id is stored, and checked as draft 7", async () => {
    const uri = "https://schemas.example.com/lii.json";
    const lii = { definitions: { A: { $id: "#foo", type: "integer" } }, properties: { n: { $ref: "#foo" } } };
    expect((await store(uri, lii)).status).toBe(201);
    await workflow("lii", { schema: { $ref: uri }, draft: "7" });
    expect((await run("lii", { n: 1 })).status).toBe("succeeded");
    expect((await run("lii", { n: "x" })).status).toBe("failed");
    // In 2020-12 the same $id is an error: a step of that draft cannot use it.
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: {
        slug: "lii-2020",
        name: "x",
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "json_schema", config: { schema: { $ref: uri }, draft: "2020-12" } }],
      },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors[0]).toMatchObject({ field: "steps[0].config.resources", code: "invalid_schema" });
  });

  test("a custom meta-schema stored by the org: its $vocabulary turns validation keywords off", async () => {
    const meta = "https://schemas.example.com/meta/no-validation.json";
    expect(
      (
        await store(meta, {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          $vocabulary: {
            "https://json-schema.org/draft/2020-12/vocab/core": true,
            "https://json-schema.org/draft/2020-12/vocab/applicator": true,
          },
          $dynamicAnchor: "meta",
          allOf: [
            { $ref: "https://json-schema.org/draft/2020-12/meta/core" },
            { $ref: "https://json-schema.org/draft/2020-12/meta/applicator" },
          ],
        })
      ).status,
    ).toBe(201);
    await workflow("vocab", { schema: { $schema: meta, properties: { bad: false, n: { minimum: 10 } } } });
    expect((await run("vocab", { n: 1 })).status).toBe("succeeded"); // minimum means nothing here
    expect((await run("vocab", { bad: 1 })).status).toBe("failed");
  });

  test("400 for a meta-schema that requires a vocabulary Assay does not implement", async () => {
    const meta = "https://schemas.example.com/meta/custom-vocab.json";
    const body = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $vocabulary: {
        "https://json-schema.org/draft/2020-12/vocab/core": true,
        "https://example.com/vocab/x": true,
      },
    };
    const r = await store(meta, body);
    expect(r.status).toBe(201); // as a schema it is fine; as a dialect it cannot be used
    const w = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: {
        slug: "custom-vocab",
        name: "x",
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "json_schema", config: { schema: { $schema: meta } } }],
      },
    });
    expect(w.status).toBe(400);
    expect(w.json).toEqual(
      errorBody(400, "invalid_request", expect.any(String), [
        {
          field: "steps[0].config.schema",
          code: "unknown_vocabulary",
          message: `the meta-schema "${meta}" requires the vocabulary "https://example.com/vocab/x", which Assay does not implement`,
        },
      ]),
    );
  });
});

describe("format-assertion vocabulary", () => {
  const meta = "https://schemas.example.com/meta/format-assertion.json";
  const save = (slug: string, schema: Record<string, unknown>) =>
    call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: {
        slug,
        name: "x",
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "json_schema", config: { schema } }],
      },
    });

  beforeAll(async () => {
    const r = await store(meta, {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $vocabulary: {
        "https://json-schema.org/draft/2020-12/vocab/core": true,
        "https://json-schema.org/draft/2020-12/vocab/applicator": true,
        "https://json-schema.org/draft/2020-12/vocab/format-assertion": true,
      },
      $dynamicAnchor: "meta",
      allOf: [
        { $ref: "https://json-schema.org/draft/2020-12/meta/core" },
        { $ref: "https://json-schema.org/draft/2020-12/meta/applicator" },
      ],
    });
    expect(r.status).toBe(201);
  });

  test("400 unknown_format for a format Assay does not check (was: ignored)", async () => {
    const r = await save("unknown-format", {
      $schema: meta,
      properties: { email: { format: "emial" }, at: { format: "date-time" } },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.schema",
          code: "unknown_format",
          message:
            '#/properties/email/format: "emial" is not a format Assay checks, and the meta-schema\'s ' +
            "format-assertion vocabulary requires every format to be checked",
        },
      ]),
    );
  });

  test("400 unknown_format for a stored schema in that dialect, too", async () => {
    const r = await store("https://schemas.example.com/typo.json", { $schema: meta, format: "emial" });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The schema is invalid.", [
        {
          field: "schema",
          code: "unknown_format",
          message:
            '#/format: "emial" is not a format Assay checks, and the meta-schema\'s ' +
            "format-assertion vocabulary requires every format to be checked",
        },
      ]),
    );
  });

  test("known formats are accepted and asserted", async () => {
    expect(
      (await save("known-format", { $schema: meta, properties: { m: { format: "email" } } })).status,
    ).toBe(201);
    expect((await run("known-format", { m: "a@example.com" })).status).toBe("succeeded");
    expect(brief(await run("known-format", { m: "nope" }))).toEqual([
      expect.objectContaining({ code: "json_schema.format", path: "/m" }),
    ]);
  });
});

describe("findings name the most specific cause", () => {
  test("oneOf/anyOf: the branch that came closest (was: only 'must match exactly one')", async () => {
    await workflow("closest", {
      schema: {
        oneOf: [
          { type: "object", required: ["kind", "card"], properties: { kind: { const: "card" } } },
          { type: "object", required: ["kind", "iban"], properties: { kind: { const: "bank" } } },
        ],
      },
    });
    expect(brief(await run("closest", { kind: "bank" }))).toEqual([
      {
        code: "json_schema.required",
        message: 'missing required property "iban" (in oneOf branch 2 of 2, the closest to matching)',
        path: "",
        rule: "#/oneOf/1/required",
      },
    ]);
  });

  test("if/then: the rule of the branch that applied (was: only 'does not match the then schema')", async () => {
    await workflow("if-then", {
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword
      schema: { if: { properties: { country: { const: "US" } } }, then: { required: ["state"] } },
    });
    expect(brief(await run("if-then", { country: "US" }))).toEqual([
      {
        code: "json_schema.required",
        message: 'missing required property "state" (the "then" rule applies because "if" matched)',
        path: "",
        rule: "#/then/required",
      },
    ]);
  });

  test("unevaluatedProperties says nothing of declared properties when a sibling failed", async () => {
    await workflow("uneval", {
      schema: {
        allOf: [{ properties: { a: { type: "integer" } }, required: ["b"] }],
        properties: { c: { type: "string" } },
        unevaluatedProperties: false,
      },
    });
    expect(brief(await run("uneval", { a: 1, c: 2, z: 0 }))).toEqual([
      expect.objectContaining({ code: "json_schema.type", path: "/c" }),
      expect.objectContaining({ code: "json_schema.required", rule: "#/allOf/0/required" }),
      expect.objectContaining({ code: "json_schema.unevaluatedProperties", path: "/z" }),
    ]);
  });
});
