// Concurrent edits of one workflow (src/workflows/fresh.ts): each save is conditional on the
// version its request read. The race is made exact with the store's beforeSave hook: the
// competing request runs after the first one has read and checked, just before it saves.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { EDIT_ATTEMPTS } from "../src/workflows/fresh.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("alice", "acme", "author")).token;
});
afterAll(() => s.close());

const base = "/api/v1/orgs/acme/workflows/";
const step = (name: string) => ({ name, validator: "syntax", config: {} });
const as = (method: string, path: string, body?: unknown) => call(s, method, path, { token: author, body });

async function workflow(slug: string, steps = 1) {
  const r = await as("POST", base, {
    slug,
    name: "Original",
    allowed_file_types: ["JSON"],
    steps: Array.from({ length: steps }, (_, i) => step(`s${i + 1}`)),
  });
  expect(r.status).toBe(201);
  return r.json as { version: number; steps: { id: number; name: string }[] };
}

/** Runs `competing` once, at the next save's last moment before its transaction. */
function beforeNextSave(competing: () => Promise<unknown>) {
  let done = false;
  s.deps.workflowStore.hooks.beforeSave = async () => {
    if (done) return;
    done = true;
    await competing();
  };
}
afterEach(() => {
  s.deps.workflowStore.hooks.beforeSave = undefined;
});

describe("an edit saved while another one lands keeps both", () => {
  test("200 PATCH name and 200 PATCH description at once: both applied, two versions", async () => {
    await workflow("pa");
    let other: Awaited<ReturnType<typeof as>> | null = null;
    beforeNextSave(async () => {
      other = await as("PATCH", `${base}pa/`, { description: "Described" });
    });
    const r = await as("PATCH", `${base}pa/`, { name: "Renamed" });
    expect(other!.status).toBe(200);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: "Renamed", description: "Described", version: 3 });
    const g = await as("GET", `${base}pa/`);
    expect(g.json).toMatchObject({ name: "Renamed", description: "Described", version: 3 });
  });

  test("201 POST step and 201 POST step at once: three steps", async () => {
    await workflow("pb");
    let other: Awaited<ReturnType<typeof as>> | null = null;
    beforeNextSave(async () => {
      other = await as("POST", `${base}pb/steps/`, step("second"));
    });
    const r = await as("POST", `${base}pb/steps/`, step("third"));
    expect(other!.status).toBe(201);
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ name: "third", order: 3 });
    const g = await as("GET", `${base}pb/`);
    expect(g.json.version).toBe(3);
    expect(g.json.steps.map((x: { name: string }) => x.name)).toEqual(["s1", "second", "third"]);
  });

  test("404 PATCH of a step the other request deleted; nothing more saved", async () => {
    const w = await workflow("pc", 2);
    const id = w.steps[1]!.id;
    let other: Awaited<ReturnType<typeof as>> | null = null;
    beforeNextSave(async () => {
      other = await as("DELETE", `${base}pc/steps/${id}/`);
    });
    const r = await as("PATCH", `${base}pc/steps/${id}/`, { name: "edited" });
    expect(other!.status).toBe(204);
    expect(r.status).toBe(404);
    expect(r.json).toEqual(errorBody(404, "not_found", "Step not found."));
    const g = await as("GET", `${base}pc/`);
    expect(g.json.version).toBe(2);
    expect(g.json.steps.map((x: { name: string }) => x.name)).toEqual(["s1"]);
  });

  test("200 PATCH of a step while an earlier step is deleted: the named step changes", async () => {
    const w = await workflow("pc3", 3);
    const [first, , third] = w.steps;
    let other: Awaited<ReturnType<typeof as>> | null = null;
    beforeNextSave(async () => {
      other = await as("DELETE", `${base}pc3/steps/${first!.id}/`);
    });
    const r = await as("PATCH", `${base}pc3/steps/${third!.id}/`, { name: "edited" });
    expect(other!.status).toBe(204);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: third!.id, name: "edited", order: 2 });
    const g = await as("GET", `${base}pc3/`);
    expect(g.json.steps.map((x: { name: string }) => x.name)).toEqual(["s2", "edited"]);
  });

  test("404 PATCH of a workflow deleted meanwhile: nothing written onto it", async () => {
    const w = await workflow("pd");
    let other: Awaited<ReturnType<typeof as>> | null = null;
    beforeNextSave(async () => {
      other = await as("DELETE", `${base}pd/`);
    });
    const r = await as("PATCH", `${base}pd/`, { name: "Ghost" });
    expect(other!.status).toBe(204);
    expect(r.status).toBe(404);
    expect(r.json).toEqual(errorBody(404, "not_found", "Workflow not found."));
    const row = await s.row<{ name: string; version: number }>(
      "SELECT name, version FROM workflows WHERE id = ?",
      (w as unknown as { id: number }).id,
    );
    expect(row).toEqual({ name: "Original", version: 1 });
  });
});

test("10 PATCHes of one workflow at once, without If-Match: all 200, each change saved once", async () => {
  // Each lost attempt means another of them was saved: none loses more than 9 times (fresh.ts).
  await workflow("pf");
  const names = Array.from({ length: 10 }, (_, i) => `Name ${i}`);
  const answers = await Promise.all(names.map((name) => as("PATCH", `${base}pf/`, { name })));
  expect(answers.map((r) => r.status)).toEqual(names.map(() => 200));
  const g = await as("GET", `${base}pf/`);
  expect(g.json.version).toBe(11);
  expect(names).toContain(g.json.name);
});

test(`409 when another save lands before each of ${EDIT_ATTEMPTS} attempts`, async () => {
  await workflow("pe");
  let n = 0;
  let busy = false;
  s.deps.workflowStore.hooks.beforeSave = async () => {
    if (busy) return;
    busy = true;
    expect((await as("PATCH", `${base}pe/`, { description: `other ${++n}` })).status).toBe(200);
    busy = false;
  };
  const r = await as("PATCH", `${base}pe/`, { name: "Mine" });
  expect(r.status).toBe(409);
  expect(r.json).toEqual(
    errorBody(
      409,
      "conflict",
      "The workflow was changed by another request while this one was saved; send it again.",
    ),
  );
  expect(n).toBe(EDIT_ATTEMPTS);
  const g = await as("GET", `${base}pe/`);
  expect(g.json).toMatchObject({ name: "Original", description: `other ${EDIT_ATTEMPTS}` });
});
