// A draft's walk through the stored XSDs its steps import runs on the workflow check thread within
// ASSAY_CHECK_TIMEOUT_MS (src/workflows/check-thread.ts). Past it, a step route (POST or PATCH of
// one step) names that step's config, the field its other config refusals name; a whole
// workflow's save names the step whose imports were being read (both named "steps" before).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, errorBody, restartTestServer, startTestServer } from "./helpers/server.ts";

const XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"';
const WORKFLOWS = "/api/v1/orgs/acme/workflows/";
let s: TestServer;
let token: string;
let stepId: string;

/**
 * ~7.2 MB (single quotes and no line breaks: pinned into the step config as JSON it stays under
 * the 8 MiB a config may hold). 8 MB parsed in 0.68 s on the 2-core machine of
 * docs/benchmarks.md: this is ~60 times the 10 ms limit, as the stored-XSD test's is 68.
 */
const BIG = `<xs:schema ${XS} targetNamespace='urn:big'>${Array.from(
  { length: 160_000 },
  (_, i) => `<xs:element name='e${i}' type='xs:string'/>`,
).join("")}</xs:schema>`;
const importing = (name: string) => ({
  name,
  validator: "xml_schema",
  config: {
    schema_type: "xsd",
    schema: `<xs:schema ${XS}><xs:import namespace="urn:big" schemaLocation="urn:big.xsd"/><xs:element name="r" type="xs:string"/></xs:schema>`,
  },
});
const tooComplex = (field: string, what: string) =>
  errorBody(400, "invalid_request", "The workflow definition is invalid.", [
    {
      field,
      code: "too_complex",
      message: `${what} did not compile within 0.01 s: simplify its schema or expressions (in an XML schema, nested group references and large occurrence counts multiply the size of a content model).`,
    },
  ]);

beforeAll(async () => {
  // Stored and saved within the default limit, then checked again under the least one (10 ms).
  const first = await startTestServer();
  token = (await first.user("walker", "acme", "author")).token;
  const stored = await call(first, "POST", "/api/v1/orgs/acme/schemas/", {
    token,
    body: { uri: "urn:big.xsd", kind: "xsd", schema: BIG },
  });
  expect(stored.status).toBe(201);
  const made = await call(first, "POST", WORKFLOWS, {
    token,
    body: { slug: "walk", name: "walk", allowed_file_types: ["XML"], steps: [importing("first")] },
  });
  expect([made.status, made.json.errors]).toEqual([201, undefined]);
  stepId = made.json.steps[0].id;
  s = await restartTestServer(first, { check_timeout_ms: 10 });
});
afterAll(() => s.close());

test("400 too_complex on POST of a step names config", async () => {
  const r = await call(s, "POST", `${WORKFLOWS}walk/steps/`, { token, body: importing("second") });
  expect([r.status, r.json]).toEqual([400, tooComplex("config", "The step's config")]);
});

test("400 too_complex on PATCH of a step names config; the workflow is unchanged", async () => {
  const r = await call(s, "PATCH", `${WORKFLOWS}walk/steps/${stepId}/`, {
    token,
    body: {
      config: {
        ...importing("first").config,
        schema: importing("first").config.schema.replace('"r"', '"s"'),
      },
    },
  });
  expect([r.status, r.json]).toEqual([400, tooComplex("config", "The step's config")]);
  const wf = await call(s, "GET", `${WORKFLOWS}walk/`, { token });
  expect(wf.json.steps.map((x: { name: string }) => x.name)).toEqual(["first"]);
});

// The walk reports the step whose imports it was reading: a whole workflow's save named only
// "steps" ("The workflow's step configs"), though every other config refusal names its step.
test("400 too_complex on a whole workflow's save names the step being walked", async () => {
  const save = (slug: string, steps: unknown[]) =>
    call(s, "POST", WORKFLOWS, { token, body: { slug, name: slug, allowed_file_types: ["XML"], steps } });
  // The walk reads the steps in order, in rounds: the first round parses both steps' own small
  // XSDs, the second the stored document step "a" imports first. The time runs out in the second
  // round, on step "a", or (a busy machine, the thread descheduled for 10 ms) already in the
  // first, on whichever step it was reading (with both cores busy: steps[1], 3 runs of 6). Either is
  // a step being walked.
  const both = await save("walk-2", [importing("a"), importing("b")]);
  expect(both.status).toBe(400);
  expect([0, 1].map((i) => tooComplex(`steps[${i}].config`, "The step's config"))).toContainEqual(both.json);
  // A step without imports before it: the walk is of the XSD steps only, named by their place.
  const second = await save("walk-3", [
    { name: "shape", validator: "json_schema", config: { schema: { type: "object" } } },
    importing("b"),
  ]);
  expect([second.status, second.json]).toEqual([400, tooComplex("steps[1].config", "The step's config")]);
});
