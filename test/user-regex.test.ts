// Author patterns run on a linear-time engine (issue #19, item 5). JavaScript's engine gave up on
// `^(a|a)*b|^a*c$` over "a"*40+"c" after about a second and answered "no match": text_rules and
// json_schema then passed data that the pattern forbids, and csv_table refused a valid cell. Each
// validator now gets the pattern's true answer; what RE2 cannot run is a 400 at save time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

const HOSTILE = "^(a|a)*b|^a*c$";
const EVIL = `${"a".repeat(40)}c`; // matches through the second branch, after the first explodes
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
});
afterAll(() => s.close());

async function run(slug: string, body: string, contentType: string) {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: body,
    headers: { "content-type": contentType, prefer: "wait=30" },
  });
  expect(r.status).toBe(201);
  return r.json;
}

const findingsOf = (r: { steps: Array<{ findings: unknown[] }> }) => r.steps[0].findings;

describe("hostile patterns get the pattern's true answer", () => {
  test("text_rules not_match: the forbidden text fails the run (was: succeeded)", async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "text-hostile",
      allowed_file_types: ["TEXT"],
      steps: [
        {
          name: "rules",
          validator: "text_rules",
          config: { patterns: [{ regex: HOSTILE, must: "not_match", message: "forbidden" }] },
        },
      ],
    });
    const r = await run("text-hostile", EVIL, "text/plain");
    expect(r.status).toBe("failed");
    expect(findingsOf(r)).toEqual([
      {
        severity: "error",
        code: "text.pattern_forbidden",
        message: "forbidden",
        path: null,
        line: 1,
        column: 1,
        rule: HOSTILE,
      },
    ]);
  });

  test("json_schema pattern under not: the matching string fails the run (was: succeeded)", async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "json-pattern",
      allowed_file_types: ["JSON"],
      steps: [
        { name: "schema", validator: "json_schema", config: { schema: { not: { pattern: HOSTILE } } } },
      ],
    });
    const r = await run("json-pattern", JSON.stringify(EVIL), "application/json");
    expect(r.status).toBe("failed");
    expect(findingsOf(r)).toEqual([
      expect.objectContaining({ code: "json_schema.not", path: "", rule: "#/not" }),
    ]);
  });

  test("json_schema patternProperties: the matching key is refused (was: succeeded)", async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "json-keys",
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "schema",
          validator: "json_schema",
          config: { schema: { patternProperties: { [HOSTILE]: false } } },
        },
      ],
    });
    const r = await run("json-keys", JSON.stringify({ [EVIL]: 1 }), "application/json");
    expect(r.status).toBe("failed");
    expect(findingsOf(r)).toEqual([
      expect.objectContaining({
        code: "json_schema.patternProperties",
        path: `/${EVIL}`,
        rule: `#/patternProperties/${HOSTILE}`,
      }),
    ]);
  });

  test("csv_table pattern: the matching cell is valid, the other one is not (was: both refused)", async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "csv-pattern",
      allowed_file_types: ["CSV"],
      steps: [
        {
          name: "table",
          validator: "csv_table",
          config: { schema: { fields: [{ name: "code", constraints: { pattern: "(a|a)*b|a*c" } }] } },
        },
      ],
    });
    const r = await run("csv-pattern", `code\n${EVIL}\n${"a".repeat(40)}\n`, "text/csv");
    expect(r.status).toBe("failed");
    expect(findingsOf(r)).toEqual([expect.objectContaining({ code: "csv.constraint_error", line: 3 })]);
  });
});

describe("400 at save for what cannot run in linear time", () => {
  const save = (slug: string, validator: string, config: unknown, types = ["TEXT"]) =>
    call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: { slug, name: slug, allowed_file_types: types, steps: [{ name: "s", validator, config }] },
    });

  test("text_rules: a backreference", async () => {
    const r = await save("t-backref", "text_rules", {
      patterns: [{ regex: "(['\"]).*\\1", must: "not_match", message: "m" }],
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", expect.any(String), [
        {
          field: "steps[0].config.patterns[0].regex",
          code: "unsupported_regex",
          message:
            "is not supported (patterns run on a linear-time engine, docs/validators.md): backreferences (\\1, \\k<name>) are not supported: they cannot run in linear time",
        },
      ]),
    );
    expect(await s.count("workflows")).toBe(4);
  });

  test("json_schema: a lookahead that is not right after a leading ^", async () => {
    const r = await save("j-ahead", "json_schema", { schema: { pattern: "\\d+(?=px)" } }, ["JSON"]);
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", expect.any(String), [
        {
          field: "steps[0].config.schema",
          code: "unsupported_regex",
          message:
            '#/pattern "\\\\d+(?=px)" is not supported (patterns run on a linear-time engine, docs/validators.md): a lookahead ((?= or (?!) is supported only at the start of a pattern that begins with ^, e.g. ^(?=.*[0-9]).{8,}$',
        },
      ]),
    );
  });

  test("csv_table: a backreference", async () => {
    const r = await save(
      "c-backref",
      "csv_table",
      { schema: { fields: [{ name: "a", constraints: { pattern: "(x)\\1" } }] } },
      ["CSV"],
    );
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      expect.objectContaining({
        code: expect.any(String),
        message: expect.stringContaining("backreferences"),
      }),
    ]);
  });

  test("a password rule (leading lookaheads after ^) is accepted and judged", async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "password",
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "schema",
          validator: "json_schema",
          config: { schema: { type: "string", pattern: "^(?=.*[0-9])(?!.*\\s).{8,}$" } },
        },
      ],
    });
    expect((await run("password", '"abcdefg1"', "application/json")).status).toBe("succeeded");
    expect((await run("password", '"abcd efg1"', "application/json")).status).toBe("failed");
    expect((await run("password", '"abcdefgh"', "application/json")).status).toBe("failed");
  });
});
