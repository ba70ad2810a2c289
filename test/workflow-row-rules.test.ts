// An assertions rule reading `row` needs CSV records or a top-level JSON/YAML array: on a
// workflow that allows only XML it is refused when saved (src/workflows/check-rows.ts).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("alice", "acme", "author")).token;
});
afterAll(() => s.close());

const base = "/api/v1/orgs/acme/workflows/";
const rule = (id: string, extra: Record<string, string> = {}) => ({
  id,
  expr: "true",
  message: "m",
  ...extra,
});
const rulesStep = (rules: unknown[], is_active = true) => ({
  name: "rules",
  validator: "assertions",
  config: { rules },
  is_active,
});
const post = (slug: string, types: string[], steps: unknown[]) =>
  call(s, "POST", base, { token: author, body: { slug, name: slug, allowed_file_types: types, steps } });
const refused = (errors: { field: string; rule: string; types?: string }[]) =>
  errorBody(
    400,
    "invalid_request",
    "The workflow definition is invalid.",
    errors.map((e) => ({
      field: e.field,
      code: "file_type_unsupported",
      message: `Rule "${e.rule}" reads \`row\`, which needs CSV records or a top-level JSON or YAML array; the workflow's allowed_file_types (${e.types ?? "XML"}) give none.`,
    })),
  );

test("400 on an XML-only workflow, naming the expr, when or message that reads row", async () => {
  const r = await post(
    "x1",
    ["XML"],
    [
      rulesStep([
        rule("doc", { expr: "has(data.a)" }),
        rule("r", { expr: "row.qty != ''" }),
        rule("w", { when: "row.qty != ''" }),
        rule("m", { message: "qty {{row.qty}}" }),
      ]),
    ],
  );
  expect(r.json).toEqual(
    refused([
      { field: "steps[0].config.rules[1].expr", rule: "r" },
      { field: "steps[0].config.rules[2].when", rule: "w" },
      { field: "steps[0].config.rules[3].message", rule: "m" },
    ]),
  );
  expect((await call(s, "GET", `${base}x1/`, { token: author })).status).toBe(404);
});

test("201 when an allowed type gives rows, for rules without row, for an inactive step", async () => {
  expect((await post("x2", ["XML", "CSV"], [rulesStep([rule("r", { expr: "row.a != ''" })])])).status).toBe(
    201,
  );
  expect((await post("x3", ["XML"], [rulesStep([rule("d", { expr: "has(data.a)" })])])).status).toBe(201);
  expect((await post("x4", ["XML"], [rulesStep([rule("r", { expr: "row.a != ''" })], false)])).status).toBe(
    201,
  );
  // `row` bound by a macro is not the per-row variable.
  expect(
    (await post("x5", ["XML"], [rulesStep([rule("m", { expr: "[1].all(row, row > 0)" })])])).status,
  ).toBe(201);
});

test("400 for a step's PATCH (field without steps[i]) and for a PATCH dropping CSV", async () => {
  const step = (await call(s, "GET", `${base}x3/`, { token: author })).json.steps[0];
  const r = await call(s, "PATCH", `${base}x3/steps/${step.id}/`, {
    token: author,
    body: { config: { rules: [rule("r", { expr: "row.a != ''" })] } },
  });
  expect(r.json).toEqual(refused([{ field: "config.rules[0].expr", rule: "r" }]));
  const w = await call(s, "PATCH", `${base}x2/`, { token: author, body: { allowed_file_types: ["XML"] } });
  expect(w.json).toEqual(refused([{ field: "steps[0].config.rules[0].expr", rule: "r" }]));
});
