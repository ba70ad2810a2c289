// A webhook's filter names workflows by slug, and a workflow's rename rewrites the filters that
// name it (docs/webhooks.md). Requests that change a filter, arriving together with a rename of a
// workflow it names, must leave what one after the other leaves: the new slug in the filter, never
// the old one (a later workflow given it would be notified), and no change of another request
// lost. On PostgreSQL the race is made exact (test/helpers/held-writes.ts): every request waits at
// its audit entry (each writes one), after its reads; on SQLite they are sent together.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { heldTogether } from "./helpers/held-writes.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let root: string;
let n = 0;
beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true });
  root = s.rootToken;
});
afterAll(() => s.close());

const workflow = async () => {
  const slug = `wf-${++n}`;
  await createWorkflow(s, root, {
    slug,
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  return slug;
};
const hooks = "/api/v1/orgs/acme/webhooks/";
const webhook = async (workflow_slugs: string[]) =>
  (await call(s, "POST", hooks, { token: root, body: { url: "http://127.0.0.1:9/", workflow_slugs } })).json
    .id;
const filterOf = async (id: number) =>
  (await call(s, "GET", `${hooks}${id}/`, { token: root })).json.workflow_slugs;
const rename = (from: string, to: string) => () =>
  call(s, "PATCH", `/api/v1/orgs/acme/workflows/${from}/`, { token: root, body: { slug: to } });
const unknown = (i: number, slug: string) =>
  errorBody(400, "invalid_request", "The webhook is invalid.", [
    {
      field: `workflow_slugs[${i}]`,
      code: "unknown_workflow",
      message: `No workflow with the slug "${slug}" in this organization.`,
    },
  ]);

describe("renames and filter changes at once", () => {
  test("two workflows of one filter renamed at once: the filter names both new slugs", async () => {
    const [a, b] = [await workflow(), await workflow()];
    const id = await webhook([a, b]);
    const rs = await heldTogether(s, "audit_head", [rename(a, `${a}-x`), rename(b, `${b}-x`)]);
    expect(rs.map((r) => r.status)).toEqual([200, 200]);
    expect([...(await filterOf(id))].sort()).toEqual([`${a}-x`, `${b}-x`]);
  });

  test("a filter PATCHed after a rename began: 400 naming the old slug, the rename kept", async () => {
    const [a, b] = [await workflow(), await workflow()];
    const id = await webhook([a]);
    const [renamed, patched] = await heldTogether(s, "audit_head", [
      rename(a, `${a}-x`),
      () => call(s, "PATCH", `${hooks}${id}/`, { token: root, body: { workflow_slugs: [a, b] } }),
    ]);
    expect(renamed!.status).toBe(200);
    // On SQLite the PATCH may come first (sent together): then both land.
    if (patched!.status === 200) expect(await filterOf(id)).toEqual([`${a}-x`, b]);
    else {
      expect(patched!.json).toEqual(unknown(0, a));
      expect(await filterOf(id)).toEqual([`${a}-x`]);
    }
  });

  test("a rename that began after a filter PATCH: both kept", async () => {
    const [a, b] = [await workflow(), await workflow()];
    const id = await webhook([a]);
    const [patched, renamed] = await heldTogether(s, "audit_head", [
      () => call(s, "PATCH", `${hooks}${id}/`, { token: root, body: { workflow_slugs: [a, b] } }),
      rename(a, `${a}-x`),
    ]);
    expect([patched!.status, renamed!.status]).toEqual([200, 200]);
    expect(await filterOf(id)).toEqual([`${a}-x`, b]);
  });

  test("a webhook created naming a workflow being renamed: 400, or created with the new slug", async () => {
    const a = await workflow();
    const [renamed, created] = await heldTogether(s, "audit_head", [
      rename(a, `${a}-x`),
      () =>
        call(s, "POST", hooks, { token: root, body: { url: "http://127.0.0.1:9/", workflow_slugs: [a] } }),
    ]);
    expect(renamed!.status).toBe(200);
    if (created!.status === 201) expect(await filterOf(created!.json.id)).toEqual([`${a}-x`]);
    else expect(created!.json).toEqual(unknown(0, a));
    if (s.databaseUrl) expect(created!.status).toBe(400); // held: the rename came first
  });

  test("a rename that began after a webhook's creation: the new webhook names the new slug", async () => {
    const a = await workflow();
    const [created, renamed] = await heldTogether(s, "audit_head", [
      () =>
        call(s, "POST", hooks, { token: root, body: { url: "http://127.0.0.1:9/", workflow_slugs: [a] } }),
      rename(a, `${a}-x`),
    ]);
    expect([created!.status, renamed!.status]).toEqual([201, 200]);
    expect(await filterOf(created!.json.id)).toEqual([`${a}-x`]);
  });
});

test("20 rounds of a filter PATCH and a rename sent together: never the old slug", async () => {
  for (let i = 0; i < 20; i++) {
    const [a, b] = [await workflow(), await workflow()];
    const id = await webhook([a]);
    const [patched, renamed] = await Promise.all([
      call(s, "PATCH", `${hooks}${id}/`, { token: root, body: { workflow_slugs: [a, b] } }),
      rename(a, `${a}-x`)(),
    ]);
    expect(renamed.status).toBe(200);
    const f = await filterOf(id);
    if (patched.status === 200) expect(f).toEqual([`${a}-x`, b]);
    else {
      expect(patched.json).toEqual(unknown(0, a));
      expect(f).toEqual([`${a}-x`]);
    }
    await call(s, "DELETE", `${hooks}${id}/`, { token: root }); // an org holds at most 20 in tests
  }
});
