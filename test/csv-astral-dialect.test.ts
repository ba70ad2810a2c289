// A CSV dialect whose delimiter or quote is one character outside the Basic Multilingual Plane
// (an emoji: one character to Table Schema, two UTF-16 code units to JavaScript). The records were
// read right, but the locator that gives findings their line and column compared one code unit
// with the whole delimiter, so it never matched: a finding on row 3 was reported on line 2.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  for (const [slug, delimiter, quoteChar] of [
    ["emoji-delimiter", "😀", '"'],
    ["emoji-quote", ";", "🙂"],
  ])
    await createWorkflow(s, s.rootToken, {
      slug,
      allowed_file_types: ["CSV"],
      steps: [
        {
          name: "t",
          validator: "csv_table",
          config: {
            schema: { fields: [{ name: "a" }, { name: "n", type: "integer" }] },
            dialect: { delimiter, quoteChar },
          },
        },
      ],
    });
});
afterAll(() => s.close());

const findings = async (wf: string, text: string) => {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${wf}/runs/`, {
    token: s.rootToken,
    raw: text,
    headers: { "content-type": "text/csv" },
  });
  expect(r.status).toBe(201);
  return r.json.steps[0].findings.map((f: { code: string; line: number; column: number; path: string }) => [
    f.code,
    f.line,
    f.column,
    f.path,
  ]);
};

test("an emoji delimiter: each finding on its record's line, at its cell (columns in UTF-16 units)", async () => {
  expect(await findings("emoji-delimiter", 'a😀n\n"x😀y"😀1\nz😀q\n')).toEqual([
    ["csv.type_error", 3, 4, "/rows/3/n"],
  ]);
});

test("an emoji quote: quoted cells holding the delimiter, and the finding after them", async () => {
  expect(await findings("emoji-quote", "a;n\n🙂x;y🙂;1\n🙂é🙂🙂;🙂;q\n")).toEqual([
    ["csv.type_error", 3, 12, "/rows/3/n"],
  ]);
});

test("a stray emoji quote in an unquoted cell is a syntax error at that quote", async () => {
  expect(await findings("emoji-quote", "a;n\nx🙂y;1\n")).toEqual([["csv.syntax_error", 2, 2, null]]);
});
