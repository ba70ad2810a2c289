// A run's findings are well-formed Unicode in every answer of the API, as the reports already were
// (docs/ci-usage.md): a finding's message cut at its bound never splits an emoji into a lone
// surrogate, and a lone surrogate from the data (a JSON key "\ud800") is U+FFFD in its path and
// message. JSON.stringify writes a lone surrogate as the escape "\ud800", which strict parsers
// (Rust's serde_json, I-JSON) refuse: one hostile key made the whole run unreadable to them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_FINDING_MESSAGE_CHARS } from "../src/validators/limits.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const runs = (wf: string) => `/api/v1/orgs/acme/workflows/${wf}/runs/`;

beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "table",
    allowed_file_types: ["CSV"],
    steps: [
      { name: "t", validator: "csv_table", config: { schema: { fields: [{ name: "n", type: "integer" }] } } },
    ],
  });
  await createWorkflow(s, s.rootToken, {
    slug: "closed",
    allowed_file_types: ["JSON"],
    steps: [{ name: "j", validator: "json_schema", config: { schema: { additionalProperties: false } } }],
  });
});
afterAll(() => s.close());

/** Every string in the answer, keys included, is well-formed (no lone surrogate). */
function wellFormedEverywhere(v: unknown): boolean {
  if (typeof v === "string") return v.isWellFormed();
  if (Array.isArray(v)) return v.every(wellFormedEverywhere);
  if (v && typeof v === "object")
    return Object.entries(v).every(([k, x]) => k.isWellFormed() && wellFormedEverywhere(x));
  return true;
}
/** The JSON text writes a lone surrogate as an escape (`"\\ud800"`; `"\\\\ud800"` is text). */
function loneEscape(json: string): boolean {
  const units: number[] = [];
  for (let i = 0; i < json.length; i++)
    if (json[i] === "\\" && json[i + 1] === "u") {
      units.push(Number.parseInt(json.slice(i + 2, i + 6), 16));
      i += 5;
    } else if (json[i] === "\\") {
      units.push(0x20);
      i++;
    } else units.push(json.charCodeAt(i));
  return !units
    .map((u) => String.fromCharCode(u))
    .join("")
    .isWellFormed();
}

async function answers(id: string) {
  const paths = [`/api/v1/orgs/acme/runs/${id}/`, `/api/v1/orgs/acme/runs/${id}/findings/`];
  return Promise.all(paths.map((p) => call(s, "GET", p, { token: s.rootToken })));
}

describe("a message cut at its bound", () => {
  test("ends before an emoji it would split, not with half of it (was a lone \\ud83d)", async () => {
    // The message is `"<cell>" is not a valid integer`; the cut falls inside the first emoji.
    const cell = `${"a".repeat(MAX_FINDING_MESSAGE_CHARS - 3)}${"😀".repeat(10)}`;
    const r = await call(s, "POST", runs("table"), {
      token: s.rootToken,
      raw: `n\n${cell}\n`,
      headers: { "content-type": "text/csv" },
    });
    expect(r.status).toBe(201);
    const message = r.json.steps[0].findings[0].message;
    expect(message).toBe(`"${"a".repeat(MAX_FINDING_MESSAGE_CHARS - 3)}…`);
    for (const a of [r, ...(await answers(r.json.id))]) {
      expect(wellFormedEverywhere(a.json)).toBe(true);
      expect(loneEscape(a.text)).toBe(false);
    }
  });
});

describe("a lone surrogate from the data", () => {
  test("is U+FFFD in the finding's path and message, in the answer, the run and its findings", async () => {
    const r = await call(s, "POST", runs("closed"), {
      token: s.rootToken,
      raw: '{"\\ud800": 1, "x\\udfff": 2}',
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(201);
    expect(r.json.steps[0].findings.map((f: { path: string }) => f.path)).toEqual(["/\ufffd", "/x\ufffd"]);
    for (const a of [r, ...(await answers(r.json.id))]) {
      expect(wellFormedEverywhere(a.json)).toBe(true);
      expect(loneEscape(a.text)).toBe(false);
    }
  });
});
