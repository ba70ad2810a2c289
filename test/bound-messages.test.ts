// Messages built from a bound say "1 character", not "1 characters": the web app puts the field's
// name in front of them ("delimiter must not have more than 1 character"), so they read as a
// sentence. The codes are unchanged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

describe("messages of a bound of 1", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s?.close();
  });

  const save = (slug: string, validator: string, config: Record<string, unknown>, types = ["CSV"]) =>
    call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: { slug, name: slug, allowed_file_types: types, steps: [{ name: "one", validator, config }] },
    });

  test("a step config's string of one character at most: 'must not have more than 1 character'", async () => {
    const r = await save("delim", "csv_table", {
      schema: { fields: [{ name: "a" }] },
      dialect: { delimiter: ";;", quoteChar: "" },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "The workflow definition is invalid.", [
        {
          field: "steps[0].config.dialect.delimiter",
          code: "invalid",
          message: "must not have more than 1 character",
        },
        {
          field: "steps[0].config.dialect.quoteChar",
          code: "invalid",
          message: "must not have fewer than 1 character",
        },
      ]),
    );
  });

  test("a JSON Schema's maxItems 1 and minProperties 1: findings in the singular", async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "one-item",
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "schema",
          validator: "json_schema",
          config: {
            schema: {
              properties: { list: { maxItems: 1 }, map: { minProperties: 1 }, name: { maxLength: 1 } },
            },
          },
        },
      ],
    });
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/one-item/runs/", {
      token: s.rootToken,
      body: { list: [1, 2], map: {}, name: "ab" },
    });
    expect(r.status).toBe(201);
    expect(
      r.json.steps[0].findings.map((f: { code: string; message: string }) => [f.code, f.message]),
    ).toEqual([
      ["json_schema.maxItems", "must not have more than 1 item"],
      ["json_schema.minProperties", "must not have fewer than 1 property"],
      ["json_schema.maxLength", "must not have more than 1 character"],
    ]);
  });

  // max_line_length is at least 1, so a line over it has 2 characters or more.
  test("text rules over a bound of 0: '1 line', '1 byte'", async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "tiny",
      allowed_file_types: ["TEXT"],
      steps: [
        {
          name: "bounds",
          validator: "text_rules",
          config: { max_bytes: 0, max_lines: 0 },
        },
      ],
    });
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/tiny/runs/", {
      token: s.rootToken,
      raw: "x",
      headers: { "content-type": "text/plain" },
    });
    expect(r.status).toBe(201);
    expect(
      r.json.steps[0].findings.map((f: { code: string; message: string }) => [f.code, f.message]),
    ).toEqual([
      ["text.max_bytes", "1 byte, more than the 0 allowed"],
      ["text.max_lines", "1 line, more than the 0 allowed"],
    ]);
  });
});
