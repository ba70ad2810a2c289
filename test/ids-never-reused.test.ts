// An id is never handed out twice (migration 18 on SQLite; PostgreSQL's identities never go
// back): deleting the newest webhook, step, stored schema, token-holding user must not give its id
// to the next one, or an old id held by a client, an audit entry naming "user N" or a run's step
// would point at a different row. Run on both backends.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let admin: string;

beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true });
  admin = s.rootToken;
  await createWorkflow(s, admin, {
    slug: "orders",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

/** Creates two, deletes the newer (the one a max(id) + 1 rule would hand out again), creates one. */
async function newestDeletedThenCreated(
  path: string,
  body: () => unknown,
  idOf = (j: { id: number }) => j.id,
) {
  const ids: number[] = [];
  for (let i = 0; i < 2; i++) {
    const r = await call(s, "POST", path, { token: admin, body: body() });
    expect(r.status).toBe(201);
    ids.push(idOf(r.json));
  }
  const del = await call(s, "DELETE", `${path}${ids[1]}/`, { token: admin });
  expect(del.status).toBe(204);
  const again = await call(s, "POST", path, { token: admin, body: body() });
  expect(again.status).toBe(201);
  return { deleted: ids[1]!, next: idOf(again.json) };
}

describe("the id of a deleted row is not handed out again", () => {
  test("webhooks", async () => {
    const r = await newestDeletedThenCreated("/api/v1/orgs/acme/webhooks/", () => ({
      url: "http://127.0.0.1:9/h",
    }));
    expect(r.next).toBeGreaterThan(r.deleted);
    // The old id still means the deleted endpoint: gone, not the new one.
    expect((await call(s, "GET", `/api/v1/orgs/acme/webhooks/${r.deleted}/`, { token: admin })).status).toBe(
      404,
    );
  });

  test("steps", async () => {
    const r = await newestDeletedThenCreated("/api/v1/orgs/acme/workflows/orders/steps/", () => ({
      name: "again",
      validator: "syntax",
      config: {},
    }));
    expect(r.next).toBeGreaterThan(r.deleted);
  });

  test("stored schemas", async () => {
    let n = 0;
    const r = await newestDeletedThenCreated("/api/v1/orgs/acme/schemas/", () => ({
      uri: `urn:example:s${++n}`,
      schema: { type: "object" },
    }));
    expect(r.next).toBeGreaterThan(r.deleted);
  });

  test("users, and the audit entries that name them", async () => {
    const base = "/api/v1/admin/users/";
    const ann = await call(s, "POST", base, { token: admin, body: { username: "ann" } });
    expect(ann.status).toBe(201);
    expect((await call(s, "DELETE", `${base}ann/`, { token: admin })).status).toBe(204);
    const bob = await call(s, "POST", base, { token: admin, body: { username: "bob" } });
    expect(bob.status).toBe(201);
    expect(bob.json.id).toBeGreaterThan(ann.json.id);
    // Entries for target "user <ann's id>" are ann's only.
    const audit = await call(s, "GET", `/api/v1/admin/audit/?target_type=user&target_id=${ann.json.id}`, {
      token: admin,
    });
    expect(audit.status).toBe(200);
    const names = new Set(audit.json.results.map((e: { target: { name: string } }) => e.target.name));
    expect([...names]).toEqual(["ann"]);
  });

  test("tokens of a deleted user", async () => {
    const u = await s.user("carl");
    expect((await call(s, "DELETE", "/api/v1/admin/users/carl/", { token: admin })).status).toBe(204);
    const d = await s.user("dora");
    expect(d.tokenId).toBeGreaterThan(u.tokenId);
    expect(d.id).toBeGreaterThan(u.id);
  });
});
