// The official YAML test suite (vendored: test/fixtures/yaml-test-suite, with its LICENSE and the
// commit it is from) through a real server, as a user submits YAML: every case is a run.
//
//  - A case with an `error` marker must be refused: its `syntax` step fails (an error finding).
//  - Any other case must be read: its `syntax` step passes (warnings allowed, e.g. `%YAML 1.1`).
//  - Where the case has `in.json` (one JSON value per document), the documents the server reads
//    must be exactly those values, in order. Every run has a json_schema step whose schema is
//    `false`: each document fails it once, at the document's own root, so its findings give the
//    number of documents and where each starts. A case with `in.json` runs on a workflow of its
//    own with one more json_schema step `{const: v}` for each distinct value `v` of its model: the
//    documents that step refuses must be exactly those whose model is not `v` (the same lines as
//    the `false` step gives for them). Together: the same documents, each the value it should be.
//    The same workflow has an assertions step with a rule `data == <v>` for each such `v` (CEL
//    reads YAML on its own path, integers exact): each rule must fail on exactly those documents.
//
// Pass counts are exact and every known miss is listed by name: the test fails when a count
// drops, when an unlisted case misses, or when a listed one starts passing. docs/conformance.md
// ("YAML conformance") carries the same numbers and says why each miss is one.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";

const SUITE = fileURLToPath(new URL("../fixtures/yaml-test-suite", import.meta.url));

interface Case {
  /** `229Q`, or `2G84/00` for one of a test's several cases. */
  id: string;
  name: string;
  yaml: Uint8Array<ArrayBuffer>;
  error: boolean;
  /** The JSON model, one value per document; null when the case has no in.json. */
  model: unknown[] | null;
}

/** The JSON values of a text that holds several, one after another (in.json of a stream). */
function jsonValues(text: string): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  const ws = /\s/;
  while (i < text.length) {
    while (i < text.length && ws.test(text[i])) i++;
    if (i >= text.length) break;
    const start = i;
    let depth = 0;
    let inString = false;
    for (; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') {
          inString = false;
          if (depth === 0) {
            i++;
            break;
          }
        }
      } else if (c === '"') inString = true;
      else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        if (--depth === 0) {
          i++;
          break;
        }
      } else if (depth === 0 && ws.test(c)) break;
    }
    out.push(JSON.parse(text.slice(start, i)));
  }
  return out;
}

function loadCases(): Case[] {
  const out: Case[] = [];
  const visit = (rel: string) => {
    const dir = join(SUITE, rel);
    if (existsSync(join(dir, "in.yaml"))) {
      const json = join(dir, "in.json");
      const error = existsSync(join(dir, "error"));
      out.push({
        id: rel,
        name: readFileSync(join(dir, "==="), "utf8").trim(),
        yaml: new Uint8Array(readFileSync(join(dir, "in.yaml"))),
        error,
        model: !error && existsSync(json) ? jsonValues(readFileSync(json, "utf8")) : null,
      });
      return;
    }
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name)))
      if (e.isDirectory()) visit(rel ? `${rel}/${e.name}` : e.name);
  };
  visit("");
  return out;
}

/** Exact counts: [passed, total] for error cases, valid cases, and cases with a JSON model. */
const EXPECTED = {
  error: [94, 94],
  valid: [301, 308],
  json: [274, 279],
};

const DUPLICATE =
  "Assay's choice: equal keys in one mapping are a syntax error (YAML 1.2 §3.2.1.1); the suite checks parsing only";
const NO_DOCUMENT =
  "Assay's choice: a stream without a document is checked as one document, null, so that an empty file passes no schema and no rule vacuously";

/** Known misses by "<id> <name>", with the reason (docs/conformance.md, "YAML conformance"). */
const KNOWN_MISSES: Record<string, string> = {
  // Valid YAML refused: two null keys (`: a` then `: b`); the same node twice as a key (`*a`
  // after `&a [a, &b b]`).
  "2JQS Block Mapping with Missing Keys": DUPLICATE,
  "X38W Aliases in Flow Objects": DUPLICATE,
  // No document in the stream: only comments, or nothing, or a `...` with no document before it.
  "8G76 Spec Example 6.10. Comment Lines": NO_DOCUMENT,
  "98YD Spec Example 5.5. Comment Indicator": NO_DOCUMENT,
  "AVM7 Empty Stream": NO_DOCUMENT,
  "HWV9 Document-end marker": NO_DOCUMENT,
  "QT73 Comment and document-end marker": NO_DOCUMENT,
};

const SYNTAX = { name: "syntax", validator: "syntax", config: {} };
/** Every document fails `false` once, at its root: the number of documents and their lines. */
const DOCUMENTS = {
  name: "documents",
  validator: "json_schema",
  config: { schema: false, max_findings: 10000 },
};

let s: TestServer;
let seq = 0;

interface Step {
  name: string;
  status: string;
  findings: Array<{
    severity: string;
    code: string;
    message: string;
    line: number | null;
    rule: string | null;
  }>;
}

async function runOn(
  workflow: string,
  yaml: Uint8Array<ArrayBuffer>,
): Promise<{ steps: Step[] } | { refused: string }> {
  const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${workflow}/runs/`, {
    token: s.rootToken,
    raw: yaml,
    headers: { "content-type": "application/yaml", "x-filename": "in.yaml" },
  });
  return r.status === 201 ? { steps: r.json.steps } : { refused: `${r.status} ${r.text}` };
}

/** A JSON value as a CEL literal: `data == <literal>` holds for the document that is that value. */
function cel(v: unknown): string {
  if (v === null || typeof v === "boolean" || typeof v === "string") return JSON.stringify(v);
  // An integral number is a CEL int, as YAML's integers are; `1.0` (a double) equals it in CEL.
  if (typeof v === "number") return String(v);
  if (Array.isArray(v)) return `[${v.map(cel).join(", ")}]`;
  return `{${Object.entries(v as object)
    .map(([k, x]) => `${JSON.stringify(k)}: ${cel(x)}`)
    .join(", ")}}`;
}

const errorsOf = (step: Step | undefined) => (step?.findings ?? []).filter((f) => f.severity === "error");
const sortedLines = (lines: Array<number | null>) => lines.map(String).sort();

/** What went wrong with a case, or null when it passed. */
async function judge(c: Case): Promise<string | null> {
  let workflow = "stream";
  const values: unknown[] = [];
  if (c.model) {
    for (const v of c.model) if (!values.some((w) => Bun.deepEquals(v, w, true))) values.push(v);
    workflow = `c${++seq}`;
    await createWorkflow(s, s.rootToken, {
      slug: workflow,
      fail_fast: false,
      allowed_file_types: ["YAML"],
      steps: [
        SYNTAX,
        DOCUMENTS,
        ...values.map((v, i) => ({
          name: `const${i}`,
          validator: "json_schema",
          config: { schema: { const: v }, max_findings: 10000 },
        })),
        // A stream without documents has no value to compare (and assertions needs a rule).
        ...(values.length === 0
          ? []
          : [
              {
                name: "rules",
                validator: "assertions",
                config: {
                  rules: values.map((v, i) => ({
                    id: `is${i}`,
                    expr: `data == ${cel(v)}`,
                    message: `not ${i}`,
                  })),
                  max_findings: 10000,
                },
              },
            ]),
      ],
    });
  }
  const run = await runOn(workflow, c.yaml);
  if ("refused" in run) return c.error ? null : `refused: ${run.refused}`;
  const syntax = errorsOf(run.steps[0]);
  if (c.error) return syntax.length > 0 ? null : "read without a syntax error";
  if (syntax.length > 0) return `syntax: ${syntax.map((f) => `${f.line}:${f.message}`).join("; ")}`;
  if (!c.model) return null;
  const docs = errorsOf(run.steps[1]);
  if (docs.length !== c.model.length) return `${docs.length} documents, not ${c.model.length}`;
  const lines = docs.map((f) => f.line);
  for (let i = 0; i < values.length; i++) {
    const expected = lines.filter((_, j) => !Bun.deepEquals(c.model?.[j], values[i], true));
    const got = errorsOf(run.steps[2 + i]).map((f) => f.line);
    if (JSON.stringify(sortedLines(got)) !== JSON.stringify(sortedLines(expected)))
      return `value ${JSON.stringify(values[i])} is not documents at lines ${sortedLines(expected)} but ${sortedLines(got)}`;
    // assertions reads YAML on its own path (integers exact, as CEL ints): the same documents.
    const others = c.model.filter((m) => !Bun.deepEquals(m, values[i], true)).length;
    const refused = errorsOf(run.steps[2 + values.length]).filter((f) => f.rule === `is${i}`).length;
    if (refused !== others)
      return `assertions: data == ${cel(values[i])} is false for ${refused} documents, not ${others}`;
  }
  return null;
}

beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "stream",
    fail_fast: false,
    allowed_file_types: ["YAML"],
    steps: [SYNTAX, DOCUMENTS],
  });
}, 60_000);
afterAll(() => s.close());

describe("YAML test suite through the API", () => {
  test("exact pass counts, every miss listed by name", async () => {
    const cases = loadCases();
    const misses: Record<string, string> = {};
    // A few cases at a time: each is a workflow save (if it has a model) and a run.
    for (let i = 0; i < cases.length; i += 16) {
      const batch = cases.slice(i, i + 16);
      const verdicts = await Promise.all(batch.map(judge));
      batch.forEach((c, j) => {
        if (verdicts[j] !== null) misses[`${c.id} ${c.name}`] = verdicts[j] as string;
      });
    }
    const count = (pick: (c: Case) => boolean) => {
      const of = cases.filter(pick);
      return [of.filter((c) => !(`${c.id} ${c.name}` in misses)).length, of.length];
    };
    const got = {
      error: count((c) => c.error),
      valid: count((c) => !c.error),
      json: count((c) => c.model !== null),
    };
    const known = Object.keys(KNOWN_MISSES);
    expect({ unexpectedMisses: Object.keys(misses).filter((n) => !known.includes(n)) }).toEqual({
      unexpectedMisses: [],
    });
    expect({ nowPassing: known.filter((n) => !(n in misses)) }).toEqual({ nowPassing: [] });
    expect(got).toEqual(EXPECTED);
  }, 120_000);
});
