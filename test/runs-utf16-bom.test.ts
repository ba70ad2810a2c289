// POST …/runs/ without a charset parameter: a UTF-16 byte order mark names the encoding of a YAML,
// CSV or text submission, as it already did for XML (RFC 7303). YAML 1.2 §5.2 requires UTF-16
// input with a BOM; Excel's "Unicode text" (tab-separated) and Notepad's "Unicode" files are
// UTF-16LE with one. They were a 400 "not valid utf-8" unless the client named the charset,
// though no UTF-8 text starts with FF FE or FE FF. JSON stays UTF-8 (RFC 8259 §8.1).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const runs = (wf: string) => `/api/v1/orgs/acme/workflows/${wf}/runs/`;

beforeAll(async () => {
  s = await startTestServer();
  const wf = (slug: string, allowed_file_types: string[], steps: unknown[]) =>
    createWorkflow(s, s.rootToken, { slug, allowed_file_types, steps });
  await wf(
    "yaml",
    ["YAML", "JSON"],
    [
      {
        name: "a",
        validator: "assertions",
        config: { rules: [{ id: "a", expr: 'data.a == "é😀"', message: "a" }] },
      },
    ],
  );
  await wf(
    "table",
    ["CSV"],
    [
      {
        name: "t",
        validator: "csv_table",
        config: {
          schema: { fields: [{ name: "a" }, { name: "n", type: "integer" }] },
          dialect: { delimiter: "\t" },
        },
      },
    ],
  );
  await wf(
    "text",
    ["TEXT"],
    [
      {
        name: "r",
        validator: "text_rules",
        config: { encoding: "utf-8", patterns: [{ regex: "é", must: "not_match", message: "é" }] },
      },
    ],
  );
});
afterAll(() => s.close());

const utf16 = (text: string, le: boolean) => {
  const body = Buffer.from(text, "utf16le");
  if (!le) for (let i = 0; i < body.length; i += 2) [body[i], body[i + 1]] = [body[i + 1]!, body[i]!];
  return new Uint8Array([...(le ? [0xff, 0xfe] : [0xfe, 0xff]), ...body]);
};
const post = (wf: string, raw: BodyInit, type: string) =>
  call(s, "POST", runs(wf), { token: s.rootToken, raw, headers: { "content-type": type } });
const findings = (r: Awaited<ReturnType<typeof post>>) =>
  r.json.steps.flatMap((st: { findings: { code: string; line: number; column: number }[] }) =>
    st.findings.map((f) => [f.code, f.line, f.column]),
  );

test("YAML in UTF-16, little- and big-endian: read as such (was 400)", async () => {
  for (const le of [true, false]) {
    const bytes = utf16('a: "é😀"\n', le);
    const r = await post("yaml", bytes, "application/yaml");
    expect([r.status, r.json.status]).toEqual([201, "succeeded"]);
    expect(r.json.submission.size).toBe(bytes.length);
    const stored = await fetch(`${s.url}/api/v1/orgs/acme/runs/${r.json.id}/content/`, {
      headers: { authorization: `Bearer ${s.rootToken}` },
    });
    expect(new Uint8Array(await stored.arrayBuffer())).toEqual(bytes);
  }
});

test("the charset found is kept with the submission: a queued run reads it so too", async () => {
  const r = await call(s, "POST", runs("yaml"), {
    token: s.rootToken,
    raw: utf16('a: "é😀"\n', true),
    headers: { "content-type": "application/yaml", prefer: "respond-async" },
  });
  expect(r.status).toBe(202);
  expect((await waitForRun(s, s.rootToken, r.json.url)).status).toBe("succeeded");
});

test("tab-separated values as Excel saves Unicode text: read, positions in characters", async () => {
  const r = await post("table", utf16("a\tn\r\né\t1\r\n😀\tx\r\n", true), "text/tab-separated-values");
  expect([r.status, r.json.status]).toEqual([201, "failed"]);
  expect(findings(r)).toEqual([["csv.type_error", 3, 4]]);
});

test("text: its lines are read; encoding: utf-8 still says the file is not UTF-8", async () => {
  const r = await post("text", utf16("ab\ncé\n", true), "text/plain");
  expect([r.status, r.json.status]).toEqual([201, "failed"]);
  expect(findings(r)).toEqual([
    ["text.encoding", 1, 1],
    ["text.pattern_forbidden", 2, 2],
  ]);
});

test("JSON in UTF-16 without a charset: still 400, JSON is UTF-8 (RFC 8259 §8.1)", async () => {
  const before = await s.count("runs");
  const r = await post("yaml", utf16('{"a": "é😀"}', true), "application/json");
  expect(r.json).toEqual(
    errorBody(400, "invalid_request", "The run request is invalid.", [
      { field: "charset", code: "invalid_encoding", message: "The content is not valid utf-8." },
    ]),
  );
  expect(await s.count("runs")).toBe(before);
});

test("a charset parameter still decides: utf-8 with a UTF-16 BOM is a 400", async () => {
  const r = await post("yaml", utf16("a: 1\n", true), "application/yaml; charset=utf-8");
  expect(r.status).toBe(400);
  expect(r.json.errors).toEqual([
    { field: "charset", code: "invalid_encoding", message: "The content is not valid utf-8." },
  ]);
});
