// A stored JSON Schema is checked (meta-validation, references, a compile) on the workflow check
// thread, as a workflow's draft is, within ASSAY_CHECK_TIMEOUT_MS: it was checked on the HTTP
// thread, and a 290 KB schema whose $defs chain 8,000 `$ref`s held every request 25 s before its
// 400 (docs/security.md). Its answers are the ones the check in place gives.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { storeJsonSchema } from "./helpers/json-schema-saves.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

// The checks that must pass take ~30–50 ms cold here (a fresh thread compiling the meta-schema),
// the 8,000-$ref chain ~15 s: 2 s leaves a wide margin both ways on a machine slower or faster
// than this one (300 ms was within 6× of the checks that must pass: a loaded CI host refused them).
const TIMEOUT_MS = 2000;
let s: TestServer;
let author: string;
const SCHEMAS = "/api/v1/orgs/acme/schemas/";

beforeAll(async () => {
  s = await startTestServer({ check_timeout_ms: TIMEOUT_MS });
  author = (await s.user("ann", "acme", "author")).token;
});
afterAll(() => s.close());

/** $defs d0 → d1 → … → dn, each a `$ref` to the next; dn a string. */
function chain(n: number) {
  const defs: Record<string, unknown> = { [`d${n}`]: { type: "string" } };
  for (let i = 0; i < n; i++) defs[`d${i}`] = { $ref: `#/$defs/d${i + 1}` };
  return { $ref: "#/$defs/d0", $defs: defs };
}
const store = (uri: string, schema: unknown) => storeJsonSchema(s, author, uri, schema);

test("201 for a valid schema and 400 for an invalid one, both checked on the thread", async () => {
  const before = s.deps.draftChecker.offloaded;
  const ok = await store("https://example.com/ok.json", { type: "object" });
  expect(ok.status).toBe(201);
  const bad = await store("https://example.com/bad.json", { type: "object", required: "id" });
  expect(bad.status).toBe(400);
  expect(bad.json).toEqual({
    detail: "The schema is invalid.",
    code: "invalid_request",
    status: 400,
    errors: [
      {
        field: "schema",
        code: "invalid_schema",
        message: "/required: must be array (meta-schema #/allOf/3/properties/required)",
      },
    ],
  });
  const replaced = await call(s, "PUT", `${SCHEMAS}${ok.json.id}/`, {
    token: author,
    body: { uri: "https://example.com/ok.json", kind: "json_schema", schema: { type: "string" } },
  });
  expect(replaced.status).toBe(200);
  expect(s.deps.draftChecker.offloaded).toBe(before + 3);
});

test("400 too_complex past the check's time limit, and nothing stored: the 8,000-$ref chain", async () => {
  const before = s.deps.draftChecker.offloaded;
  const r = await store("https://example.com/chain.json", chain(8000));
  expect(r.status).toBe(400);
  expect(r.json).toEqual({
    detail: "The schema is invalid.",
    code: "invalid_request",
    status: 400,
    errors: [
      {
        field: "schema",
        code: "too_complex",
        message: `The schema did not compile within ${TIMEOUT_MS / 1000} s: simplify it (long chains of $ref and deeply nested subschemas cost the most).`,
      },
    ],
  });
  expect(s.deps.draftChecker.offloaded).toBe(before + 1);
  const list = await call(s, "GET", SCHEMAS, { token: author });
  expect(list.json.results.map((x: { uri: string }) => x.uri)).not.toContain(
    "https://example.com/chain.json",
  );
  // The thread was replaced: the next check is answered.
  expect((await store("https://example.com/after.json", chain(3))).status).toBe(201);
});
