// Response schemas hold no TypeBox transform. Elysia's t.Integer is one (it also accepts numeric
// strings, for input), and a response schema holding any transform makes Elysia pass every answer
// through TypeBox's interpreted Value.Encode instead of its compiled check: a page of 50 runs
// cost 2.5 ms of CPU instead of 0.6 (docs/benchmarks.md). Responses use Int() (src/http/schemas.ts).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { TransformKind } from "@sinclair/typebox";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

/** Paths inside a schema where a transform sits ("" for the root). */
function transformsIn(schema: unknown, at = "", seen = new Set<unknown>()): string[] {
  if (!schema || typeof schema !== "object" || seen.has(schema)) return [];
  seen.add(schema);
  const o = schema as Record<string | symbol, unknown>;
  const out = TransformKind in o ? [at || "(root)"] : [];
  for (const k of ["anyOf", "oneOf", "allOf"]) {
    const list = Array.isArray(o[k]) ? (o[k] as unknown[]) : [];
    for (let i = 0; i < list.length; i++) out.push(...transformsIn(list[i], `${at}/${k}/${i}`, seen));
  }
  if (o.properties && typeof o.properties === "object")
    for (const [k, v] of Object.entries(o.properties)) out.push(...transformsIn(v, `${at}/${k}`, seen));
  if (o.items) out.push(...transformsIn(o.items, `${at}/items`, seen));
  return out;
}

test("no route's response schema holds a transform", () => {
  const routes = s.app.routes as {
    method: string;
    path: string;
    hooks?: { response?: Record<string, unknown> };
  }[];
  let checked = 0;
  const found: string[] = [];
  for (const r of routes) {
    for (const [status, schema] of Object.entries(r.hooks?.response ?? {})) {
      checked++;
      for (const at of transformsIn(schema)) found.push(`${r.method} ${r.path} ${status} ${at}`);
    }
  }
  expect(checked).toBeGreaterThan(300);
  expect(found).toEqual([]);
  // The check itself sees a transform where there is one (Elysia's t.Integer is one).
  expect(transformsIn({ properties: { n: { [TransformKind]: {} } } })).toEqual(["/n"]);
});

test("integers in answers are still documented and checked as integers", async () => {
  const doc = await call(s, "GET", "/api/v1/openapi.json");
  const schemas = doc.json.components.schemas;
  expect(doc.json.paths["/api/v1/orgs/{org_slug}/runs/{run_id}/"].get.responses["200"].content).toEqual({
    "application/json": { schema: { $ref: "#/components/schemas/Run" } },
  });
  expect(schemas.Submission.properties.size).toEqual({ type: "integer" });
  expect(schemas.Run.properties.workflow.properties.version).toEqual({ type: "integer" });
  const me = await call(s, "GET", "/api/v1/users/me/", { token: s.rootToken });
  expect(me.status).toBe(200);
  expect(Number.isInteger(me.json.id)).toBe(true);
});
