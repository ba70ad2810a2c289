// Workflow versions over the API (issue 24): list (paged), one version's whole definition, the
// field-by-field diff, restore, runs pinned to a version, the 400/404/409 answers and the roles.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
let viewer: string;
let executor: string;
let outsider: string;
let wfId: number;
let stepId: number;
/** The workflow as answered after each save: version n is snapshots[n - 1]. */
// biome-ignore lint/suspicious/noExplicitAny: JSON answers, compared whole
const snapshots: any[] = [];
const WF = "/api/v1/orgs/acme/workflows/orders";
const V = `${WF}/versions`;
const JSON_CT = { "content-type": "application/json" };
const schemaOf = (required: string[]) => ({
  schema: { type: "object", required, properties: { id: { type: "integer" } } },
});

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
  viewer = (await s.user("vic", "acme", "viewer")).token;
  executor = (await s.user("eve", "acme", "executor")).token;
  outsider = (await s.user("out", "other", "admin")).token;
  // v1: requires id. v2: a new description. v3: requires id and total. v4: accepts YAML too.
  const w = await createWorkflow(s, author, {
    slug: "orders",
    name: "Orders",
    allowed_file_types: ["JSON"],
    steps: [{ name: "schema", validator: "json_schema", config: schemaOf(["id"]) }],
  });
  wfId = w.id;
  stepId = w.steps[0].id;
  snapshots.push(w);
  const v2 = await call(s, "PATCH", `${WF}/`, { token: author, body: { description: "All orders" } });
  snapshots.push(v2.json);
  await call(s, "PATCH", `${WF}/steps/${stepId}/`, {
    token: author,
    body: { config: schemaOf(["id", "total"]) },
  });
  snapshots.push((await call(s, "GET", `${WF}/`, { token: author })).json);
  const v4 = await call(s, "PATCH", `${WF}/`, {
    token: author,
    body: { allowed_file_types: ["JSON", "YAML"] },
  });
  snapshots.push(v4.json);
});
afterAll(() => s.close());

const vUrl = (n: number) => `${s.url}/api/v1/orgs/acme/workflows/${wfId}/versions/${n}/`;

describe("list", () => {
  test("newest first, paged, each with who saved it", async () => {
    const r = await call(s, "GET", `${V}/?page_size=2`, { token: viewer });
    expect(r.status).toBe(200);
    expect(r.json.count).toBe(4);
    expect(r.json.results.map((v: { version: number }) => v.version)).toEqual([4, 3]);
    expect(r.json.next).toContain("page=2");
    expect(r.json.results[0]).toEqual({
      version: 4,
      url: vUrl(4),
      created_at: expect.any(String),
      created_by: { id: expect.any(Number), username: "ann" },
      restored_from: null,
      is_current: true,
      step_count: 1,
    });
    const p2 = await call(s, "GET", `${V}/?page_size=2&page=2`, { token: viewer });
    expect(
      p2.json.results.map((v: { version: number; is_current: boolean }) => [v.version, v.is_current]),
    ).toEqual([
      [2, false],
      [1, false],
    ]);
    expect(p2.json.next).toBeNull();
  });
  test("a bad page is a 400 like every list", async () => {
    const r = await call(s, "GET", `${V}/?page=0`, { token: viewer });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe("invalid_request");
  });
});

describe("detail", () => {
  test("version 1: the whole definition as saved, settings and step configs", async () => {
    const r = await call(s, "GET", `${V}/1/`, { token: viewer });
    expect(r.status).toBe(200);
    const v1 = snapshots[0]!;
    expect(r.json).toEqual({
      version: 1,
      url: vUrl(1),
      created_at: expect.any(String),
      created_by: { id: expect.any(Number), username: "ann" },
      restored_from: null,
      is_current: false,
      workflow: { id: wfId, slug: "orders", url: `${s.url}${WF}/` },
      settings_recorded: true,
      slug: "orders",
      name: "Orders",
      description: "",
      status: v1.status,
      retention_days: null,
      allowed_file_types: ["JSON"],
      fail_fast: v1.fail_fast,
      steps: v1.steps,
    });
  });
  test("by workflow id as well as slug (the run's version_url uses the id)", async () => {
    const r = await call(s, "GET", `/api/v1/orgs/acme/workflows/${wfId}/versions/4/`, { token: viewer });
    expect(r.status).toBe(200);
    expect(r.json.allowed_file_types).toEqual(["JSON", "YAML"]);
    expect(r.json.steps[0].config.schema.required).toEqual(["id", "total"]);
  });
  test("404 for a version the workflow does not have, or that is no number", async () => {
    for (const n of ["99", "0", "abc", "1.5"]) {
      const r = await call(s, "GET", `${V}/${n}/`, { token: viewer });
      expect({ n, status: r.status, body: r.json }).toEqual({
        n,
        status: 404,
        body: errorBody(404, "not_found", "Workflow version not found."),
      });
    }
    const w = await call(s, "GET", "/api/v1/orgs/acme/workflows/nope/versions/1/", { token: viewer });
    expect(w.json).toEqual(errorBody(404, "not_found", "Workflow not found."));
  });
});

describe("diff", () => {
  test("field by field: settings whole, step configs leaf by leaf", async () => {
    const r = await call(s, "GET", `${V}/4/diff/?against=1`, { token: viewer });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      workflow: { id: wfId, slug: "orders", url: `${s.url}${WF}/` },
      from: { version: 1, url: vUrl(1) },
      to: { version: 4, url: vUrl(4) },
      changes: [
        { path: "/description", op: "changed", before: "", after: "All orders", step: null },
        { path: "/allowed_file_types", op: "changed", before: ["JSON"], after: ["JSON", "YAML"], step: null },
        {
          path: `/steps/${stepId}/config/schema/required/1`,
          op: "added",
          after: "total",
          step: { id: stepId, name: "schema" },
        },
      ],
      truncated: false,
      unrecorded: [],
    });
  });
  test("against defaults to the version before", async () => {
    const r = await call(s, "GET", `${V}/2/diff/`, { token: viewer });
    expect(r.json.from.version).toBe(1);
    expect(r.json.changes).toEqual([
      { path: "/description", op: "changed", before: "", after: "All orders", step: null },
    ]);
  });
  test("a version against itself: no change", async () => {
    const r = await call(s, "GET", `${V}/2/diff/?against=2`, { token: viewer });
    expect(r.json.changes).toEqual([]);
  });
  test("400 for version 1 without against, and for an against that is no number", async () => {
    const r = await call(s, "GET", `${V}/1/diff/`, { token: viewer });
    expect(r.json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for against.", [
        {
          field: "against",
          code: "required",
          message: "Version 1 has no version before it: name one with ?against=m.",
        },
      ]),
    );
    const bad = await call(s, "GET", `${V}/2/diff/?against=x`, { token: viewer });
    expect(bad.json).toEqual(
      errorBody(400, "invalid_request", "Invalid value for against.", [
        { field: "against", code: "invalid", message: "against is a version number (a positive integer)." },
      ]),
    );
  });
  test("404 when either version is unknown", async () => {
    for (const path of [`${V}/99/diff/?against=1`, `${V}/2/diff/?against=99`]) {
      const r = await call(s, "GET", path, { token: viewer });
      expect(r.json).toEqual(errorBody(404, "not_found", "Workflow version not found."));
    }
  });
});

describe("runs against a version", () => {
  const doc = JSON.stringify({ id: 1 }); // no total: passes version 1, fails versions 3 and 4
  test("?version=1 runs version 1's rules; the run names and links its version", async () => {
    const r = await call(s, "POST", `${WF}/runs/?version=1`, { token: executor, raw: doc, headers: JSON_CT });
    expect(r.status).toBe(201);
    expect(r.json.status).toBe("succeeded");
    expect(r.json.workflow).toEqual({ id: wfId, slug: "orders", version: 1, version_url: vUrl(1) });
    const v = await call(s, "GET", new URL(r.json.workflow.version_url).pathname, { token: viewer });
    expect(v.json.version).toBe(1);
    const now = await call(s, "POST", `${WF}/runs/`, { token: executor, raw: doc, headers: JSON_CT });
    expect(now.json.status).toBe("failed");
    expect(now.json.workflow.version).toBe(4);
  });
  test("a pinned version's own file types apply (YAML came with version 4)", async () => {
    const yaml = { "content-type": "application/yaml" };
    const r = await call(s, "POST", `${WF}/runs/?version=1`, {
      token: executor,
      raw: "id: 1\n",
      headers: yaml,
    });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe("file_type_unsupported");
  });
  test("409 for a version the workflow does not have; nothing is started", async () => {
    const before = await s.count("runs");
    const r = await call(s, "POST", `${WF}/runs/?version=99`, {
      token: executor,
      raw: doc,
      headers: JSON_CT,
    });
    expect(r.json).toEqual(
      errorBody(
        409,
        "workflow_version_unavailable",
        'Workflow "orders" has no version 99: its versions are 1 to 4.',
        [{ field: "version", code: "unavailable", message: "No version 99." }],
      ),
    );
    expect(await s.count("runs")).toBe(before);
  });
  test("400 for a version that is no number", async () => {
    for (const v of ["0", "x", "-1"]) {
      const r = await call(s, "POST", `${WF}/runs/?version=${v}`, {
        token: executor,
        raw: doc,
        headers: JSON_CT,
      });
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", "Invalid version.", [
          { field: "version", code: "invalid", message: "version is a version number (a positive integer)." },
        ]),
      );
    }
  });
  test("a Viewer cannot start one", async () => {
    const r = await call(s, "POST", `${WF}/runs/?version=1`, { token: viewer, raw: doc, headers: JSON_CT });
    expect(r.json).toEqual(
      errorBody(403, "permission_denied", "This action needs the executor role or higher."),
    );
  });
});

describe("restore (runs last: it adds versions)", () => {
  test("roles: Viewer and Executor get 403, another org's admin 403, no token 401; nothing saved", async () => {
    for (const token of [viewer, executor]) {
      const r = await call(s, "POST", `${V}/1/restore/`, { token });
      expect(r.json).toEqual(
        errorBody(403, "permission_denied", "This action needs the author role or higher."),
      );
    }
    const o = await call(s, "POST", `${V}/1/restore/`, { token: outsider });
    expect(o.json).toEqual(errorBody(403, "permission_denied", "You are not a member of this organization."));
    const anon = await call(s, "POST", `${V}/1/restore/`);
    expect(anon.status).toBe(401);
    expect(anon.json.code).toBe("authentication_required");
    expect((await call(s, "GET", `${WF}/`, { token: viewer })).json.version).toBe(4);
  });
  test("an Author restores version 1: 201, a new version 5 equal to 1, logged", async () => {
    const r = await call(s, "POST", `${V}/1/restore/`, { token: author });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(vUrl(5));
    expect(r.json).toMatchObject({
      version: 5,
      restored_from: 1,
      is_current: true,
      allowed_file_types: ["JSON"],
    });
    const d = await call(s, "GET", `${V}/5/diff/?against=1`, { token: viewer });
    expect(d.json.changes).toEqual([]);
    const w = await call(s, "GET", `${WF}/`, { token: viewer });
    expect(w.json.version).toBe(5);
    expect(w.json.description).toBe("");
    expect(w.json.steps[0].id).toBe(stepId); // the same step, its config as in version 1
    expect(w.json.steps[0].config).toEqual(snapshots[0]!.steps[0].config);
    const log = await call(s, "GET", "/api/v1/orgs/acme/audit/?action=workflow.restore", {
      token: s.rootToken,
    });
    expect(log.json.results).toHaveLength(1);
    expect(log.json.results[0]).toMatchObject({
      actor: { username: "ann", type: "user" },
      target: { type: "workflow", id: String(wfId), name: "orders" },
      changes: { restored_from: 1 },
    });
  });
  test("restoring the version it already equals saves nothing: 200 with the current version", async () => {
    const r = await call(s, "POST", `${V}/1/restore/`, { token: author });
    expect(r.status).toBe(200);
    expect(r.json.version).toBe(5);
    expect(r.headers.get("location")).toBeNull();
    expect((await call(s, "GET", `${V}/`, { token: viewer })).json.count).toBe(5);
  });
  test("404 for an unknown version", async () => {
    const r = await call(s, "POST", `${V}/9/restore/`, { token: author });
    expect(r.json).toEqual(errorBody(404, "not_found", "Workflow version not found."));
  });
});

describe("a PUT of the definition as the web editor sends it", () => {
  const PUT_WF = "/api/v1/orgs/acme/workflows/edited";
  const definition = (over: Record<string, unknown> = {}) => ({
    slug: "edited",
    name: "Edited",
    allowed_file_types: ["TEXT", "JSON", "XML"],
    steps: [
      { name: "syntax", validator: "syntax", config: {} },
      { name: "schema", validator: "json_schema", config: { schema: { type: "object" } } },
    ],
    ...over,
  });
  test("the same file types in another order, the same steps without ids: no change, no version", async () => {
    const made = await call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: author, body: definition() });
    expect(made.status).toBe(201);
    const same = await call(s, "PUT", `${PUT_WF}/`, {
      token: author,
      body: definition({ allowed_file_types: ["JSON", "XML", "TEXT"] }),
    });
    expect(same.status).toBe(200);
    expect(same.json.version).toBe(1);
    expect(same.json.steps.map((x: { id: number }) => x.id)).toEqual(
      made.json.steps.map((x: { id: number }) => x.id),
    );
  });
  test("a renamed workflow: the steps keep their ids, and the version's diff is the name alone", async () => {
    const before = (await call(s, "GET", `${PUT_WF}/`, { token: viewer })).json;
    const r = await call(s, "PUT", `${PUT_WF}/`, { token: author, body: definition({ name: "Renamed" }) });
    expect(r.json.version).toBe(2);
    expect(r.json.steps.map((x: { id: number }) => x.id)).toEqual(
      before.steps.map((x: { id: number }) => x.id),
    );
    const d = await call(s, "GET", `${PUT_WF}/versions/2/diff/`, { token: viewer });
    expect(d.json.changes).toEqual([
      { path: "/name", op: "changed", before: "Edited", after: "Renamed", step: null },
    ]);
  });
  test("a step changed in place keeps its id; a new one gets a new id; one left out is removed", async () => {
    const before = (await call(s, "GET", `${PUT_WF}/`, { token: viewer })).json;
    const [syntaxId, schemaId] = before.steps.map((x: { id: number }) => x.id);
    const r = await call(s, "PUT", `${PUT_WF}/`, {
      token: author,
      body: definition({
        name: "Renamed",
        steps: [
          { name: "schema", validator: "json_schema", config: { schema: { type: "array" } } },
          { name: "rules", validator: "text_rules", config: { max_lines: 10 } },
        ],
      }),
    });
    expect(r.json.version).toBe(3);
    expect(r.json.steps[0].id).toBe(schemaId);
    expect(r.json.steps[1].id).not.toBe(syntaxId);
    expect(r.json.steps[1].id).not.toBe(schemaId);
  });
});

describe("a diff of steps moved, removed and added (by id, both ways)", () => {
  const MOVE_WF = "/api/v1/orgs/acme/workflows/moved";
  const step = (name: string, required: string[]) => ({
    name,
    validator: "json_schema",
    config: schemaOf(required),
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers
  const idsOf = (wf: any) => wf.steps.map((x: { id: number }) => x.id) as number[];
  const diff = async (n: number, against: number) =>
    (await call(s, "GET", `${MOVE_WF}/versions/${n}/diff/?against=${against}`, { token: viewer })).json;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers
  const shape = (x: any) => ({
    order: x.order,
    name: x.name,
    validator: x.validator,
    is_active: x.is_active,
    config: x.config,
  });

  test("a step moved up: one version, an order change for it and the one it passed; the other way round mirrors it", async () => {
    const made = await createWorkflow(s, author, {
      slug: "moved",
      name: "Moved",
      allowed_file_types: ["JSON"],
      steps: [step("a", ["a"]), step("b", ["b"]), step("c", ["c"])],
    });
    const [a, b, c] = made.steps;
    const r = await call(s, "PATCH", `${MOVE_WF}/steps/${b.id}/`, {
      token: author,
      body: { order: a.order },
    });
    expect(r.status).toBe(200);
    const now = (await call(s, "GET", `${MOVE_WF}/`, { token: viewer })).json;
    expect(now.version).toBe(2);
    expect(idsOf(now)).toEqual([b.id, a.id, c.id]);
    const forward = await diff(2, 1);
    expect(forward.changes).toEqual([
      {
        path: `/steps/${b.id}/order`,
        op: "changed",
        before: b.order,
        after: a.order,
        step: { id: b.id, name: "b" },
      },
      {
        path: `/steps/${a.id}/order`,
        op: "changed",
        before: a.order,
        after: b.order,
        step: { id: a.id, name: "a" },
      },
    ]);
    expect(forward.truncated).toBe(false);
    expect((await diff(1, 2)).changes).toEqual([
      {
        path: `/steps/${a.id}/order`,
        op: "changed",
        before: b.order,
        after: a.order,
        step: { id: a.id, name: "a" },
      },
      {
        path: `/steps/${b.id}/order`,
        op: "changed",
        before: a.order,
        after: b.order,
        step: { id: b.id, name: "b" },
      },
    ]);
  });

  test("a step removed, one added, one's config changed: each named once, by id; against an older version too", async () => {
    const [b, a, c] = (await call(s, "GET", `${MOVE_WF}/`, { token: viewer })).json.steps;
    const r = await call(s, "PUT", `${MOVE_WF}/`, {
      token: author,
      body: {
        slug: "moved",
        name: "Moved",
        allowed_file_types: ["JSON"],
        steps: [step("b", ["b", "bb"]), step("c", ["c"]), step("d", ["d"])],
      },
    });
    expect(r.json.version).toBe(3);
    expect(idsOf(r.json).slice(0, 2)).toEqual([b.id, c.id]);
    const d = r.json.steps[2];
    expect((await diff(3, 2)).changes).toEqual([
      {
        path: `/steps/${b.id}/config/schema/required/1`,
        op: "added",
        after: "bb",
        step: { id: b.id, name: "b" },
      },
      {
        path: `/steps/${c.id}/order`,
        op: "changed",
        before: c.order,
        after: a.order,
        step: { id: c.id, name: "c" },
      },
      { path: `/steps/${d.id}`, op: "added", after: shape(d), step: { id: d.id, name: "d" } },
      { path: `/steps/${a.id}`, op: "removed", before: shape(a), step: { id: a.id, name: "a" } },
    ]);
    // Against version 1 (a, b, c): b is first again, so its order changed from there too.
    expect((await diff(3, 1)).changes.map((x: { path: string; op: string }) => [x.path, x.op])).toEqual([
      [`/steps/${b.id}/order`, "changed"],
      [`/steps/${b.id}/config/schema/required/1`, "added"],
      [`/steps/${c.id}/order`, "changed"],
      [`/steps/${d.id}`, "added"],
      [`/steps/${a.id}`, "removed"],
    ]);
  });
});

describe("which saves make a version", () => {
  const C = "/api/v1/orgs/acme/workflows/counted";
  const count = async () => (await call(s, "GET", `${C}/versions/`, { token: viewer })).json.count as number;
  const current = async () => (await call(s, "GET", `${C}/`, { token: viewer })).json.version as number;

  test("each step added, changed, removed and each setting saved: one; a no-op, a run, a webhook: none", async () => {
    await createWorkflow(s, author, {
      slug: "counted",
      name: "Counted",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    const added = await call(s, "POST", `${C}/steps/`, {
      token: author,
      body: { name: "schema", validator: "json_schema", config: schemaOf(["id"]) },
    });
    expect(added.status).toBe(201);
    expect([await count(), await current()]).toEqual([2, 2]);
    const changed = await call(s, "PATCH", `${C}/steps/${added.json.id}/`, {
      token: author,
      body: { config: schemaOf(["id", "total"]) },
    });
    expect(changed.status).toBe(200);
    expect([await count(), await current()]).toEqual([3, 3]);
    // The same config again: saved as it was, no version.
    const same = await call(s, "PATCH", `${C}/steps/${added.json.id}/`, {
      token: author,
      body: { config: schemaOf(["id", "total"]) },
    });
    expect(same.status).toBe(200);
    expect([await count(), await current()]).toEqual([3, 3]);
    // A run started, and a webhook made for the workflow: no version.
    const run = await call(s, "POST", `${C}/runs/`, {
      token: executor,
      raw: JSON.stringify({ id: 1, total: 2 }),
      headers: JSON_CT,
    });
    expect(run.status).toBe(201);
    expect(run.json.workflow.version).toBe(3);
    const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: s.rootToken,
      body: { url: "https://93.184.215.14/hook", workflow_slugs: ["counted"] },
    });
    expect(hook.status).toBe(201);
    expect([await count(), await current()]).toEqual([3, 3]);
    const removed = await call(s, "DELETE", `${C}/steps/${added.json.id}/`, { token: author });
    expect(removed.status).toBe(204);
    expect([await count(), await current()]).toEqual([4, 4]);
    // A slug change is a save of a setting; the webhook its filter follows makes no version.
    const renamed = await call(s, "PATCH", `${C}/`, { token: author, body: { slug: "counted-2" } });
    expect(renamed.status).toBe(200);
    const C2 = "/api/v1/orgs/acme/workflows/counted-2";
    expect((await call(s, "GET", `${C2}/versions/`, { token: viewer })).json.count).toBe(5);
    const inactive = await call(s, "PATCH", `${C2}/`, { token: author, body: { status: "inactive" } });
    expect(inactive.json.version).toBe(6);
    // The run still names the version it ran, and that version is still there, whole.
    const again = await call(s, "GET", `/api/v1/orgs/acme/runs/${run.json.id}/`, { token: viewer });
    expect(again.json.workflow).toMatchObject({ slug: "counted-2", version: 3 });
    const v3 = await call(s, "GET", new URL(again.json.workflow.version_url).pathname, { token: viewer });
    expect(v3.json.steps.map((x: { name: string }) => x.name)).toEqual(["syntax", "schema"]);
    // Restoring version 3 brings the steps back, not the slug or the inactive status.
    const restored = await call(s, "POST", `${C2}/versions/3/restore/`, { token: author });
    expect(restored.status).toBe(201);
    expect(restored.json).toMatchObject({
      version: 7,
      restored_from: 3,
      slug: "counted-2",
      status: "inactive",
    });
    expect(restored.json.steps.map((x: { name: string }) => x.name)).toEqual(["syntax", "schema"]);
  });
});
