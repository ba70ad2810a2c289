// A workflow saved as its author's user is deleted is saved, as one sent just before the deletion
// is: the version keeps its author's name without the id, as the deletion leaves the user's
// earlier versions (workflow_versions.created_by, ON DELETE SET NULL). On PostgreSQL the race is
// made exact (test/helpers/held-writes.ts: both wait at their audit entry); the deletion sent
// first committed while the version's INSERT waited on the user's row, and the save answered the
// catch-all 409 "deleted by another request meanwhile; send it again", which the retry answers
// with a 401. On SQLite the two are sent together (and there the save
// may also come after the deletion: 401).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { heldTogether } from "./helpers/held-writes.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let n = 0;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const body = (slug: string) => ({
  slug,
  name: slug,
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
});

test.each([["the deletion"], ["the save"]])(
  "%s sent first: 204 and 201, the version without the id",
  async (first) => {
    const name = `author-${++n}`;
    const slug = `wf-${n}`;
    const u = await s.user(name, "acme", "author");
    const del = () => call(s, "DELETE", `/api/v1/admin/users/${name}/`, { token: s.rootToken });
    const save = () => call(s, "POST", "/api/v1/orgs/acme/workflows/", { token: u.token, body: body(slug) });
    const [deleted, saved] =
      first === "the deletion"
        ? await heldTogether(s, "audit_head", [del, save])
        : (await heldTogether(s, "audit_head", [save, del])).reverse();
    expect(deleted!.status).toBe(204);
    // SQLite runs them one after the other: the deletion may come before the save's authentication.
    if (!s.databaseUrl && saved!.status === 401) return;
    expect(saved!.status).toBe(201);
    const v = await call(s, "GET", `/api/v1/orgs/acme/workflows/${slug}/versions/1/`, { token: s.rootToken });
    expect(v.json.created_by).toEqual({ id: null, username: name });
  },
);
