// A heavy workflow draft is checked on the workflow check thread (src/workflows/check-thread.ts),
// so that compiling its schemas holds no request of anyone else: an audit measured /healthz held
// 6.4 s by one workflow save, and 10.8 s by a 19-byte PATCH of it. What the thread answers is
// what the check in place answers: the same 201, the same 400 body.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { until } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

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
  test("takes a heavy draft and answers as the check in place does: 201, and the same 400", async () => {
    const before = s.deps.draftChecker.offloaded;
    expect((await create(workflow("light-ok", light("string")))).status).toBe(201);
    expect(s.deps.draftChecker.offloaded).toBe(before);
    const made = await create(workflow("heavy-ok", heavy("string")));
    expect(made.status).toBe(201);
    expect(made.json.steps[0].config.schema.$defs.d799).toEqual({
      type: "string",
      description: "x".repeat(100),
    });
    expect(s.deps.draftChecker.offloaded).toBe(before + 1);

    const inPlace = await create(workflow("light-bad", light("nope")));
    const onThread = await create(workflow("heavy-bad", heavy("nope")));
    expect(s.deps.draftChecker.offloaded).toBe(before + 2);
    expect(inPlace.status).toBe(400);
    expect(onThread.status).toBe(400);
    expect(onThread.json).toEqual({ ...inPlace.json, errors: expect.any(Array) });
    expect(problems(onThread)).toEqual(problems(inPlace));
    expect(problems(onThread)).not.toEqual([]);
    expect((await call(s, "GET", `${WORKFLOWS}heavy-bad/`, { token: author })).status).toBe(404);
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

  test("/healthz is answered while a workflow importing a large stored XSD is checked", async () => {
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
    let saved = false;
    const save = create({
      slug: "big-xsd",
      name: "big",
      allowed_file_types: ["XML"],
      steps: [0, 1, 2].map(step),
    }).then((r) => {
      saved = true;
      return r;
    });
    // While the thread compiles three ~1.7 MB schema sets (seconds), the HTTP thread answers.
    await until(() => s.deps.draftChecker.inFlight === 1, "the draft on the check thread");
    const health = await call(s, "GET", "/healthz");
    expect(health.status).toBe(200);
    expect(saved).toBe(false);
    expect((await save).status).toBe(201);
  });
});
