// A sign-in as its user is deleted gets what one after the other gets: the session (which the
// deletion then ends), or the 401 of an unknown user, logged as such. On PostgreSQL the race is
// made exact (test/helpers/held-writes.ts: both wait at their audit entry); the deletion sent
// first committed while the session's INSERT waited on the user's row, and the sign-in answered
// the catch-all 409 "deleted by another request meanwhile; send it again". On SQLite the two are
// sent together.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SYSTEM } from "../src/audit/actor.ts";
import { heldTogether } from "./helpers/held-writes.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let n = 0;
const PASSWORD = "correct horse battery";
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

test.each([["the deletion"], ["the sign-in"]])("%s sent first: 204, and 200 or 401", async (first) => {
  const name = `leaving-${++n}`;
  const u = await s.user(name);
  await s.deps.users.setPassword(u.id, await Bun.password.hash(PASSWORD), SYSTEM);
  const del = () => call(s, "DELETE", `/api/v1/admin/users/${name}/`, { token: s.rootToken });
  const login = () =>
    call(s, "POST", "/api/v1/auth/login/", { body: { username: name, password: PASSWORD } });
  const [deleted, signedIn] =
    first === "the deletion"
      ? await heldTogether(s, "audit_head", [del, login])
      : (await heldTogether(s, "audit_head", [login, del])).reverse();
  expect(deleted!.status).toBe(204);
  if (signedIn!.status === 200) {
    expect(first === "the sign-in" || !s.databaseUrl).toBe(true);
    expect(await s.count("web_sessions")).toBe(0); // ended by the deletion
    return;
  }
  expect(signedIn!.json).toEqual(errorBody(401, "authentication_required", "Invalid username or password."));
  const failed = await s.sql<{ changes: string }>(
    "SELECT changes FROM audit_log WHERE action = 'auth.login_failed' AND target_name = ?",
    name,
  );
  expect(failed.map((f) => JSON.parse(f.changes))).toEqual([{ reason: "unknown_user" }]);
});
