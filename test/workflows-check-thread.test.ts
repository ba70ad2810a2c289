// Every workflow draft is checked on the workflow check thread (src/workflows/check-thread.ts),
// so that compiling its schemas holds no request of anyone else: an audit measured /healthz held
// 6.4 s by one workflow save, and 10.8 s by a 19-byte PATCH of it; a 1.6 KB XSD held it for
// minutes. What the thread answers is what the check in place (the CLI's) answers: the same 201,
// the same 400 body; a check past ASSAY_CHECK_TIMEOUT_MS is a 400 of its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type AppError, toWire } from "../src/errors.ts";
import { prepareChecks } from "../src/validators/registry.ts";
import { checkDraft } from "../src/workflows/check.ts";
import { until } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
const WORKFLOWS = "/api/v1/orgs/acme/workflows/";
const XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"';

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("check-author", "acme", "author")).token;
});
afterAll(() => s.close());

/** A JSON Schema whose $defs weigh ~100 KiB (over the 64 KiB the thread takes), `a` of type `type`. */
const heavy = (type: string) => ({
  type: "object",
  properties: { a: { type } },
  $defs: Object.fromEntries(
    Array.from({ length: 800 }, (_, i) => [`d${i}`, { type: "string", description: "x".repeat(100) }]),
  ),
});
const light = (type: string) => ({ type: "object", properties: { a: { type } } });
const workflow = (slug: string, schema: unknown) => ({
  slug,
  name: slug,
  allowed_file_types: ["JSON"],
  steps: [{ name: "shape", validator: "json_schema", config: { schema } }],
});
const create = (body: unknown) => call(s, "POST", WORKFLOWS, { token: author, body });
/** An error body without its slug-dependent parts: the problems named. */
const problems = (r: { json: { errors: unknown } }) => r.json.errors;

describe("the workflow check thread", () => {
  test("takes every draft, light or heavy, and answers as the check in place does: 201, and the same 400", async () => {
    const before = s.deps.draftChecker.offloaded;
    expect((await create(workflow("light-ok", light("string")))).status).toBe(201);
    expect(s.deps.draftChecker.offloaded).toBe(before + 1);
    const made = await create(workflow("heavy-ok", heavy("string")));
    expect(made.status).toBe(201);
    expect(made.json.steps[0].config.schema.$defs.d799).toEqual({
      type: "string",
      description: "x".repeat(100),
    });
    expect(s.deps.draftChecker.offloaded).toBe(before + 2);

    const light400 = await create(workflow("light-bad", light("nope")));
    const heavy400 = await create(workflow("heavy-bad", heavy("nope")));
    expect(s.deps.draftChecker.offloaded).toBe(before + 4);
    expect(light400.status).toBe(400);
    expect(heavy400.status).toBe(400);
    expect(heavy400.json).toEqual({ ...light400.json, errors: expect.any(Array) });
    expect(problems(heavy400)).toEqual(problems(light400));
    expect(problems(heavy400)).not.toEqual([]);
    // The check in place (the CLI's, with no thread) throws the same 400.
    const draft = { ...workflow("light-bad", light("nope")), description: "", retention_days: null };
    await prepareChecks(["json_schema"]);
    let inPlace: unknown;
    try {
      checkDraft({ ...draft, steps: draft.steps.map((st) => ({ ...st, is_active: true })) } as never);
    } catch (e) {
      inPlace = toWire(e as AppError);
    }
    expect(inPlace).toMatchObject({ status: 400, code: light400.json.code, errors: problems(light400) });
    expect((await call(s, "GET", `${WORKFLOWS}heavy-bad/`, { token: author })).status).toBe(404);
  });

  test("a JSON Schema of a 2,000-$ref chain (1.4 s to compile) is checked there too", async () => {
    const defs: Record<string, unknown> = { d2000: { type: "string" } };
    for (let i = 0; i < 2000; i++) defs[`d${i}`] = { $ref: `#/$defs/d${i + 1}` };
    const before = s.deps.draftChecker.offloaded;
    const r = await create(workflow("ref-chain", { $ref: "#/$defs/d0", $defs: defs }));
    expect(r.status).toBe(201);
    expect(s.deps.draftChecker.offloaded).toBe(before + 1);
  });

  test("a step route's problems are named without the steps[i] prefix there too", async () => {
    const add = (schema: unknown) =>
      call(s, "POST", `${WORKFLOWS}light-ok/steps/`, {
        token: author,
        body: { name: "more", validator: "json_schema", config: { schema } },
      });
    const inPlace = await add(light("nope"));
    const onThread = await add(heavy("nope"));
    expect(inPlace.status).toBe(400);
    expect(onThread.json).toEqual(inPlace.json);
    expect((inPlace.json.errors as { field: string }[]).every((e) => !e.field.startsWith("steps["))).toBe(
      true,
    );
  });

  test("a workflow importing a large stored XSD is checked on the thread and saved", async () => {
    // ~1.7 MB: 8,000 complex types, compiled by every step that imports the document.
    const types = Array.from(
      { length: 8_000 },
      (_, i) =>
        `<xs:complexType name="T${i}"><xs:sequence><xs:element name="e" type="xs:string" minOccurs="0"/></xs:sequence><xs:attribute name="a" type="xs:int"/></xs:complexType>`,
    ).join("");
    const stored = await call(s, "POST", "/api/v1/orgs/acme/schemas/", {
      token: author,
      body: {
        uri: "urn:big.xsd",
        kind: "xsd",
        schema: `<xs:schema ${XS} targetNamespace="urn:big">${types}</xs:schema>`,
      },
    });
    expect(stored.status).toBe(201);
    const step = (i: number) => ({
      name: `s${i}`,
      validator: "xml_schema",
      config: {
        schema_type: "xsd",
        schema: `<xs:schema ${XS}><xs:import namespace="urn:big" schemaLocation="urn:big.xsd"/><xs:element name="r${i}" type="xs:string"/></xs:schema>`,
      },
    });
    const before = s.deps.draftChecker.offloaded;
    const save = await create({
      slug: "big-xsd",
      name: "big",
      allowed_file_types: ["XML"],
      steps: [0, 1, 2].map(step),
    });
    expect(save.status).toBe(201);
    expect(s.deps.draftChecker.offloaded).toBe(before + 1);
  });

  test("a light draft with an XML schema step is checked there, within the time limit", async () => {
    const before = s.deps.draftChecker.offloaded;
    const r = await create(xmlWorkflow("small-xsd", SMALL_XSD));
    expect(r.status).toBe(201);
    expect(s.deps.draftChecker.offloaded).toBe(before + 1);
  });
});

/** A small valid XSD: a root `r` of text. */
const SMALL_XSD = `<xs:schema ${XS}><xs:element name="r" type="xs:string"/></xs:schema>`;
/**
 * An XSD of ~100 bytes a level whose group `g{i}` is `g{i-1}` twice, around an optional element:
 * libxml2 expands every reference into the content model's automaton and then removes its empty
 * transitions, in time exponential in `levels` (measured: 10 levels 2.4 s, 12 past a minute).
 * At 16 levels (~360 MB, not done after 15 s) no machine compiles it before the deadline a test
 * sets: the check is held for as long as the deadline lets it run. (It is not a valid schema:
 * the model is ambiguous; it would be refused, hours later.)
 */
const HELD_LEVELS = 16;
function xsd(levels: number): string {
  let groups = `<xs:group name="g0"><xs:sequence><xs:element name="a" minOccurs="0"/></xs:sequence></xs:group>`;
  for (let i = 1; i <= levels; i++)
    groups += `<xs:group name="g${i}"><xs:sequence><xs:group ref="g${i - 1}"/><xs:group ref="g${i - 1}"/></xs:sequence></xs:group>`;
  return `<xs:schema ${XS}>${groups}<xs:element name="r"><xs:complexType><xs:group ref="g${levels}"/></xs:complexType></xs:element></xs:schema>`;
}
/** The same doubling in a RelaxNG grammar. */
function relaxng(levels: number): string {
  let defines = `<define name="d0"><optional><element name="a"><empty/></element></optional></define>`;
  for (let i = 1; i <= levels; i++)
    defines += `<define name="d${i}"><ref name="d${i - 1}"/><ref name="d${i - 1}"/></define>`;
  return `<grammar xmlns="http://relaxng.org/ns/structure/1.0"><start><element name="r"><ref name="d${levels}"/></element></start>${defines}</grammar>`;
}
const xmlStep = (schema: string, schemaType = "xsd") => ({
  name: "shape",
  validator: "xml_schema",
  config: { schema_type: schemaType, schema },
});
const xmlWorkflow = (slug: string, schema: string, schemaType = "xsd") => ({
  slug,
  name: slug,
  allowed_file_types: ["XML"],
  steps: [xmlStep(schema, schemaType)],
});

describe("a check past ASSAY_CHECK_TIMEOUT_MS", () => {
  let t: TestServer;
  let token: string;
  const base = "/api/v1/orgs/acme/workflows/";
  // The hold each test relies on: /healthz answered, and another org's request read and queued,
  // while one check runs (milliseconds each, here); 6 s leaves that a margin of thousands on a
  // loaded CI machine. Each held check costs a test this much.
  const TIMEOUT_MS = 6000;
  beforeAll(async () => {
    t = await startTestServer({ check_timeout_ms: TIMEOUT_MS });
    token = (await t.user("slow-author", "acme", "author")).token;
  });
  afterAll(() => t.close());
  const tooComplex = (field: string) =>
    errorBody(400, "invalid_request", "The workflow definition is invalid.", [
      {
        field,
        code: "too_complex",
        message: `The step's config did not compile within ${TIMEOUT_MS / 1000} s: simplify its schema or expressions (in an XML schema, nested group references and large occurrence counts multiply the size of a content model).`,
      },
    ]);

  test("is refused with 400 too_complex naming the step; meanwhile /healthz is answered; nothing is stored", async () => {
    const before = await t.count("workflows");
    let answered = false;
    const save = call(t, "POST", base, {
      token,
      body: {
        ...xmlWorkflow("held", xsd(HELD_LEVELS)),
        steps: [xmlStep(SMALL_XSD), xmlStep(xsd(HELD_LEVELS))],
      },
    }).then((r) => {
      answered = true;
      return r;
    });
    await until(() => t.deps.draftChecker.inFlight === 1, "the draft on the check thread");
    expect((await call(t, "GET", "/healthz")).status).toBe(200);
    expect(answered).toBe(false);
    const r = await save;
    expect(r.status).toBe(400);
    expect(r.json).toEqual(tooComplex("steps[1].config"));
    expect(await t.count("workflows")).toBe(before);
  });

  test("a draft queued behind the held one is checked on the new thread", async () => {
    const held = call(t, "POST", base, {
      token,
      body: xmlWorkflow("held-rng", relaxng(HELD_LEVELS), "relaxng"),
    });
    await until(() => t.deps.draftChecker.inFlight === 1, "the held draft on the check thread");
    const queued = call(t, "POST", base, { token, body: xmlWorkflow("queued", SMALL_XSD) });
    const bad = call(t, "POST", base, { token, body: xmlWorkflow("queued-bad", "<xs:schema") });
    expect((await held).json).toEqual(tooComplex("steps[0].config"));
    expect((await queued).status).toBe(201);
    const refused = await bad;
    expect(refused.status).toBe(400);
    expect(refused.json.errors).toEqual([
      { field: "steps[0].config.schema", code: "invalid_schema", message: expect.any(String) },
    ]);
    expect((await call(t, "GET", `${base}queued/`, { token })).status).toBe(200);
    expect((await call(t, "GET", `${base}held-rng/`, { token })).status).toBe(404);
  });

  test("orgs take turns: one org's queued slow drafts do not all go ahead of another org's save", async () => {
    const beta = (await t.user("beta-author", "beta", "author")).token;
    const offloadedBefore = t.deps.draftChecker.offloaded;
    const order: string[] = [];
    const save = (tok: string, org: string, body: unknown, label: string) =>
      call(t, "POST", `/api/v1/orgs/${org}/workflows/`, { token: tok, body }).then((r) => {
        order.push(label);
        return r;
      });
    const a1 = save(token, "acme", xmlWorkflow("turn-a1", xsd(HELD_LEVELS)), "acme 1");
    await until(() => t.deps.draftChecker.inFlight === 1, "acme's first draft on the check thread");
    const a2 = save(token, "acme", xmlWorkflow("turn-a2", xsd(HELD_LEVELS)), "acme 2");
    // acme's second draft waits in acme's line, not on the thread.
    await until(() => t.deps.draftChecker.offloaded === offloadedBefore + 2, "acme's second draft counted");
    expect(t.deps.draftChecker.inFlight).toBe(1);
    const b1 = save(beta, "beta", xmlWorkflow("turn-b1", SMALL_XSD), "beta 1");
    await until(() => t.deps.draftChecker.inFlight === 2, "beta's draft on the thread, behind acme's first");
    expect((await a1).json).toEqual(tooComplex("steps[0].config"));
    expect((await b1).status).toBe(201);
    expect((await a2).json).toEqual(tooComplex("steps[0].config"));
    expect(order).toEqual(["acme 1", "beta 1", "acme 2"]);
  });

  test("on a step route the field is config; the workflow keeps its steps", async () => {
    const r = await call(t, "POST", `${base}queued/steps/`, { token, body: xmlStep(xsd(HELD_LEVELS)) });
    expect(r.json).toEqual(tooComplex("config"));
    const wf = await call(t, "GET", `${base}queued/`, { token });
    expect(wf.json.steps).toHaveLength(1);
  });
});
