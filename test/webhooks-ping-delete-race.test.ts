// A ping sent as its webhook is deleted gets what one after the other gets: 202 with the ping
// queued (then deleted with the webhook), or the 404 of a webhook that is gone. On PostgreSQL the
// race is made exact (test/helpers/held-writes.ts: both wait at their audit entry); the deletion
// sent first committed while the ping's INSERT waited on the webhook's row, and the ping answered
// the catch-all 409 "deleted by another request meanwhile; send it again" instead of the 404 the
// retry gets. On SQLite the two are sent together.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { heldTogether } from "./helpers/held-writes.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true });
});
afterAll(() => s.close());

const webhook = async () =>
  `/api/v1/orgs/acme/webhooks/${
    (
      await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
        token: s.rootToken,
        body: { url: "http://127.0.0.1:9/" },
      })
    ).json.id
  }/`;

test("the deletion sent first: 204, and the ping 404 (or 202 before it, on SQLite)", async () => {
  const path = await webhook();
  const [deleted, pinged] = await heldTogether(s, "audit_head", [
    () => call(s, "DELETE", path, { token: s.rootToken }),
    () => call(s, "POST", `${path}ping/`, { token: s.rootToken }),
  ]);
  expect(deleted!.status).toBe(204);
  if (s.databaseUrl || pinged!.status !== 202)
    expect(pinged!.json).toEqual(errorBody(404, "not_found", "Webhook not found."));
  expect(await s.count("webhook_deliveries")).toBe(0);
});

test("the ping sent first: 202, then the deletion 204 removes it", async () => {
  const path = await webhook();
  const [pinged, deleted] = await heldTogether(s, "audit_head", [
    () => call(s, "POST", `${path}ping/`, { token: s.rootToken }),
    () => call(s, "DELETE", path, { token: s.rootToken }),
  ]);
  expect([pinged!.status, deleted!.status]).toEqual([202, 204]);
  expect(await s.count("webhook_deliveries")).toBe(0);
});
