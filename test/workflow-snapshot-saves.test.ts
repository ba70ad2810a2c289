// Saves of workflows whose steps reference stored schemas: the snapshot a save pins into a step
// (config.resources) is compared like the rest, and every save refreshes it (docs/decisions.md,
// "Org schemas are snapshotted into the step at save time").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
let schemaId: number;
beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("alice", "acme", "author")).token;
  const r = await as("POST", "/api/v1/orgs/acme/schemas/", { uri: URI, schema: { type: "integer" } });
  expect(r.status).toBe(201);
  schemaId = r.json.id;
});
afterAll(() => s.close());

const base = "/api/v1/orgs/acme/workflows/";
const URI = "https://ex.com/b.json";
const refStep = { name: "ref", validator: "json_schema", config: { schema: { $ref: URI } } };
const body = (slug: string, steps: unknown[] = [refStep]) => ({
  slug,
  name: slug,
  allowed_file_types: ["JSON"],
  steps,
});
const as = (method: string, path: string, b?: unknown) => call(s, method, path, { token: author, body: b });
const replaceSchema = (schema: unknown) =>
  as("PUT", `/api/v1/orgs/acme/schemas/${schemaId}/`, { uri: URI, schema });

describe("a request that changes nothing saves nothing, snapshots included", () => {
  test("200 PUT, PATCH and a step's PATCH with the same values: no new version, same step id", async () => {
    await replaceSchema({ type: "integer" });
    const created = await as("POST", base, body("rb"));
    expect(created.status).toBe(201);
    expect(created.json.steps[0].config.resources).toEqual({ [URI]: { type: "integer" } });
    for (const [method, path, b] of [
      ["PUT", `${base}rb/`, body("rb")],
      ["PUT", `${base}rb/`, body("rb")],
      ["PATCH", `${base}rb/`, { steps: [refStep] }],
      ["PATCH", `${base}rb/steps/${created.json.steps[0].id}/`, { config: refStep.config }],
    ] as const) {
      const r = await as(method, path, b);
      expect(r.status).toBe(200);
    }
    expect((await as("GET", `${base}rb/`)).json).toEqual(created.json);
  });

  test("200 the same PUT after the stored schema changed: a new version with the new snapshot", async () => {
    await replaceSchema({ type: "integer" });
    const created = await as("POST", base, body("rc"));
    expect((await replaceSchema({ type: "string" })).status).toBe(200);
    const r = await as("PUT", `${base}rc/`, body("rc"));
    expect(r.json.version).toBe(2);
    expect(r.json.steps[0].config.resources).toEqual({ [URI]: { type: "string" } });
    const again = await as("PUT", `${base}rc/`, body("rc"));
    expect(again.json).toEqual(r.json);
    expect(created.json.version).toBe(1);
  });
});

test("204 deleting a step refreshes the other steps' snapshots, as every save does", async () => {
  await replaceSchema({ type: "integer" });
  const created = await as("POST", base, body("rd", [refStep, { name: "syntax", validator: "syntax" }]));
  expect(created.status).toBe(201);
  expect((await replaceSchema({ type: "number" })).status).toBe(200);
  expect((await as("DELETE", `${base}rd/steps/${created.json.steps[1].id}/`)).status).toBe(204);
  const g = await as("GET", `${base}rd/`);
  expect(g.json.version).toBe(2);
  expect(g.json.steps.map((x: { name: string }) => x.name)).toEqual(["ref"]);
  expect(g.json.steps[0].config.resources).toEqual({ [URI]: { type: "number" } });
});
