// Wide documents that fail a JSON Schema (2026-11-29): the work of turning the engine's errors
// into findings grew with the document's width times the number of errors. Each finding's line
// and column were found by scanning every member of its object (a 14 MB object of a million
// members failing `additionalProperties` ran past the step's 60 s limit; `unevaluatedProperties:
// false` made a million findings, each such a scan, to keep a thousand), and a large `enum` was
// explained by comparing every value with every enum value (100,000 values under an enum of
// 100,000: past the limit; an enum of 20,000 objects was compared by deep equality one by one in
// the check itself). Each case below ends far inside its step's time limit, on a machine ten
// times slower too; before, each one ran past it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
});
afterAll(() => s.close());

/**
 * Each step's time limit, and how long the test waits for its run: 20 to 40 times what each case
 * takes on the 2-core development machine, and under what it took before (minutes each).
 */
const LIMIT_MS = 100_000;

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

async function save(slug: string, type: "JSON" | "YAML", config: Record<string, unknown>) {
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug,
      name: slug,
      allowed_file_types: [type],
      steps: [{ name: "schema", validator: "json_schema", config }],
    },
  });
  expect(r.status).toBe(201);
}

/** The finished run's step: status, error, findings count and the first and last finding. */
async function run(slug: string, doc: string, contentType = "application/json") {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: doc,
    headers: { "content-type": contentType, prefer: "respond-async" },
  });
  expect(r.status).toBe(202);
  const done = await waitForRun(s, s.rootToken, r.headers.get("location") ?? "", LIMIT_MS + 10_000);
  const step = done.steps[0];
  const pick = (f: Record<string, unknown> | undefined) =>
    f && { code: f.code, message: f.message, path: f.path, line: f.line, column: f.column, rule: f.rule };
  return {
    run: done.status,
    step: step.status,
    error: step.error ?? null,
    count: step.findings_count,
    first: pick(step.findings[0]),
    last: pick(step.findings.at(-1)),
  };
}

/** `{"k0":0,"k1":1,…}` on one line: member i's key starts at column `keyColumn(i)`. */
const wideObject = (n: number) =>
  `{${range(n)
    .map((i) => `"k${i}":${i}`)
    .join(",")}}`;
const keyColumn = (i: number) => 2 + range(i).reduce((c, j) => c + `"k${j}":${j},`.length, 0);

test("an object of a million members failing unevaluatedProperties: 1000 findings, at their keys", async () => {
  await save("uneval", "JSON", {
    schema: { type: "object", unevaluatedProperties: false },
    timeout_ms: LIMIT_MS,
  });
  expect(await run("uneval", wideObject(1_000_000))).toEqual({
    run: "failed",
    step: "failed",
    error: null,
    count: 1000,
    first: {
      code: "json_schema.unevaluatedProperties",
      message: 'property "k0" is not allowed (unevaluatedProperties)',
      path: "/k0",
      line: 1,
      column: 2,
      rule: "#/unevaluatedProperties",
    },
    last: {
      code: "json_schema.unevaluatedProperties",
      message: 'property "k999" is not allowed (unevaluatedProperties)',
      path: "/k999",
      line: 1,
      column: keyColumn(999),
      rule: "#/unevaluatedProperties",
    },
  });
}, 180_000);

test("an object of a million members failing additionalProperties: findings at their values", async () => {
  await save("additional", "JSON", {
    schema: { type: "object", additionalProperties: { type: "string" } },
    timeout_ms: LIMIT_MS,
  });
  expect(await run("additional", wideObject(1_000_000))).toEqual({
    run: "failed",
    step: "failed",
    error: null,
    count: 1000,
    first: {
      code: "json_schema.type",
      message: "must be string",
      path: "/k0",
      line: 1,
      column: keyColumn(0) + '"k0":'.length,
      rule: "#/additionalProperties/type",
    },
    last: {
      code: "json_schema.type",
      message: "must be string",
      path: "/k999",
      line: 1,
      column: keyColumn(999) + '"k999":'.length,
      rule: "#/additionalProperties/type",
    },
  });
}, 180_000);

test("a YAML mapping of 200,000 keys, 10,000 findings kept: each at its own line", async () => {
  await save("yaml", "YAML", {
    schema: { type: "object", additionalProperties: { type: "string" } },
    max_findings: 10_000,
    timeout_ms: LIMIT_MS,
  });
  const doc = range(200_000)
    .map((i) => `k${i}: ${i}`)
    .join("\n");
  expect(await run("yaml", doc, "application/yaml")).toEqual({
    run: "failed",
    step: "failed",
    error: null,
    count: 10_000,
    first: {
      code: "json_schema.type",
      message: "must be string",
      path: "/k0",
      line: 1,
      column: 5,
      rule: "#/additionalProperties/type",
    },
    // The run answer carries the first 1000 of the step's findings.
    last: {
      code: "json_schema.type",
      message: "must be string",
      path: "/k999",
      line: 1000,
      column: 7,
      rule: "#/additionalProperties/type",
    },
  });
}, 180_000);

test("a million values under an enum of 100,000 numbers: the one outside it is the finding", async () => {
  const values = range(100_000);
  await save("enum", "JSON", { schema: { type: "array", items: { enum: values } }, timeout_ms: LIMIT_MS });
  // The enum's last value a million times (a scan of the enum finds it last), then one outside.
  const doc = `[${"99999,".repeat(1_000_000)}100000]`;
  expect(await run("enum", doc)).toEqual({
    run: "failed",
    step: "failed",
    error: null,
    count: 1,
    first: {
      code: "json_schema.enum",
      message: `must be one of ${JSON.stringify(values).slice(0, 77)}...`,
      path: "/1000000",
      line: 1,
      column: 6_000_002,
      rule: "#/items/enum",
    },
    last: expect.anything(),
  });
}, 180_000);

test("500,000 objects under an enum of 20,000 objects: compared by value, whatever the key order", async () => {
  const values = range(20_000).map((i) => ({ id: i, tags: [i % 7] }));
  await save("objects", "JSON", { schema: { type: "array", items: { enum: values } }, timeout_ms: LIMIT_MS });
  // The enum's last value with its keys in the other order, then one outside the enum.
  const doc = `[${'{"tags":[0],"id":19999},'.repeat(500_000)}{"id":19999,"tags":[1]}]`;
  const r = await run("objects", doc);
  expect(r).toMatchObject({ run: "failed", step: "failed", error: null, count: 1 });
  expect(r.first).toMatchObject({ code: "json_schema.enum", path: "/500000", rule: "#/items/enum" });
}, 180_000);

test("a large enum beside a $ref and unevaluatedProperties: the enum's finding alone", async () => {
  // The explained enum's lookup sits in an applicator of its own; in the $ref's allOf slot, its
  // failure dropped what the $ref had evaluated, and `a` was reported as unevaluated too.
  const values = range(40).map((i) => ({ a: i }));
  await save("beside", "JSON", {
    schema: {
      $defs: { x: { properties: { a: {} } } },
      $ref: "#/$defs/x",
      enum: values,
      unevaluatedProperties: false,
    },
  });
  const r = await run("beside", '{"a": 100, "b": 1}');
  expect(r).toMatchObject({ run: "failed", step: "failed", error: null, count: 2 });
  expect(r.first).toEqual({
    code: "json_schema.enum",
    message: `must be one of ${JSON.stringify(values).slice(0, 77)}...`,
    path: "",
    line: 1,
    column: 1,
    rule: "#/enum",
  });
  expect(r.last).toMatchObject({ code: "json_schema.unevaluatedProperties", path: "/b" });
}, 60_000);
