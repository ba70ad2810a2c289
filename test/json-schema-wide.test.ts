// Wide JSON Schemas through the API (src/validators/json-schema/engine.ts): a code list of 20,000
// values, or 12,000 properties, is saved and then checked by the workers. Before, typebox compiled
// width into nesting: a 5,000-value enum passed the save and every run ended `error`, 20,000 were
// refused as "nest too deeply", and the check thread (drafts over 64 KiB) refused less than that.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
});
afterAll(() => s.close());

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

const save = (slug: string, schema: unknown) =>
  call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug,
      name: slug,
      allowed_file_types: ["JSON"],
      steps: [{ name: "schema", validator: "json_schema", config: { schema } }],
    },
  });

async function run(slug: string, doc: string) {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: doc,
    headers: { "content-type": "application/json", "x-submission-mode": "raw" },
  });
  expect(r.status).toBe(201);
  const findings = r.json.steps[0].findings.map((f: Record<string, unknown>) => {
    const { code, message, path } = f;
    return { code, message, path };
  });
  return { status: r.json.status, error: r.json.error ?? null, findings };
}

const passed = { status: "succeeded", error: null, findings: [] };

describe("a 20,000-value enum", () => {
  const numbers = range(20_000);
  const strings = numbers.map((i) => `C-${i}`);
  const notOne = (list: string) => ({
    status: "failed",
    error: null,
    findings: [{ code: "json_schema.enum", message: `must be one of ${list}...`, path: "" }],
  });

  test("of numbers is saved (was: 400 'nest too deeply') and runs pass and fail by value", async () => {
    expect((await save("numbers", { enum: numbers })).status).toBe(201);
    expect(await run("numbers", "7")).toEqual(passed);
    expect(await run("numbers", "19999")).toEqual(passed);
    expect(await run("numbers", "20000")).toEqual(notOne(JSON.stringify(numbers).slice(0, 77)));
  }, 60_000);

  test("of strings is saved and runs pass and fail by value", async () => {
    expect((await save("strings", { enum: strings })).status).toBe(201);
    expect(await run("strings", '"C-7"')).toEqual(passed);
    expect(await run("strings", '"C-20000"')).toEqual(notOne(JSON.stringify(strings).slice(0, 77)));
  }, 60_000);

  test("with a 100 KB description, checked on the check thread like every draft, is saved and runs alike", async () => {
    const before = s.deps.draftChecker.offloaded;
    const schema = { description: "x".repeat(100_000), enum: numbers };
    expect((await save("described", schema)).status).toBe(201);
    expect(s.deps.draftChecker.offloaded).toBe(before + 1);
    expect(await run("described", "7")).toEqual(passed);
    expect(await run("described", "-1")).toEqual(notOne(JSON.stringify(numbers).slice(0, 77)));
  }, 60_000);
});

test("a flat schema of 12,000 properties is saved (was: 400 'nest too deeply') and checked", async () => {
  const properties = Object.fromEntries(range(12_000).map((i) => [`p${i}`, { type: "string" }]));
  expect((await save("wide", { type: "object", properties })).status).toBe(201);
  expect(await run("wide", '{"p0": "a", "p11999": "b"}')).toEqual(passed);
  expect(await run("wide", '{"p11999": 1}')).toEqual({
    status: "failed",
    error: null,
    findings: [{ code: "json_schema.type", message: "must be string", path: "/p11999" }],
  });
}, 60_000);

describe("unevaluatedProperties in a schema too wide to compile", () => {
  // 12,000 properties: typebox's interpreter checks it (engine.ts), which applied the keyword to
  // arrays too, taking their indexes for property names (2020-12 Core §11.3: objects only).
  const wide = (p0: unknown) =>
    Object.fromEntries(range(12_000).map((i) => [`p${i}`, i === 0 ? p0 : { type: "string" }]));
  const extra = (path: string, name: string) => ({
    status: "failed",
    error: null,
    findings: [
      {
        code: "json_schema.unevaluatedProperties",
        message: `property "${name}" is not allowed (unevaluatedProperties)`,
        path,
      },
    ],
  });

  test("at the root: an array passes, as in a compiled schema; an extra property fails", async () => {
    const schema = { properties: wide({ type: "string" }), unevaluatedProperties: false };
    expect((await save("wide-unevaluated", schema)).status).toBe(201);
    expect(await run("wide-unevaluated", '["x"]')).toEqual(passed);
    expect(await run("wide-unevaluated", '{"q": 1}')).toEqual(extra("/q", "q"));
  }, 60_000);

  test("on a property: an array value passes; an object with an extra property fails", async () => {
    const schema = { properties: wide({ unevaluatedProperties: false }) };
    expect((await save("wide-unevaluated-inner", schema)).status).toBe(201);
    expect(await run("wide-unevaluated-inner", '{"p0": ["x"], "p1": "y"}')).toEqual(passed);
    expect(await run("wide-unevaluated-inner", '{"p0": {"a": 1}}')).toEqual(extra("/p0/a", "a"));
  }, 60_000);
});
