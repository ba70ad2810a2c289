// A run started as its user is deleted gets what one after the other gets: the 401 of a token
// whose user is gone (CONTRACT §6), or the run (then kept without its user). On PostgreSQL the
// race is made exact (test/helpers/held-writes.ts: both wait at their write to `runs`, the run's
// INSERT and the deletion's ON DELETE SET NULL); the run's INSERT then failed on its foreign key
// and the request got the catch-all 409 "deleted by another request meanwhile; send it again",
// with or without an Idempotency-Key, whichever was sent first. On SQLite they are sent together.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { heldTogether } from "./helpers/held-writes.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let n = 0;
beforeAll(async () => {
  s = await startTestServer();
  await createWorkflow(s, s.rootToken, {
    slug: "q",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
});
afterAll(() => s.close());

describe.each([
  ["without a key", false],
  ["with an Idempotency-Key", true],
])("%s", (_name, key) => {
  test.each([["the deletion"], ["the run start"]])(
    "%s sent first: 204 and 401, no run of the user",
    async (first) => {
      const name = `gone-${++n}`;
      const u = await s.user(name, "acme", "executor");
      const del = () => call(s, "DELETE", `/api/v1/admin/users/${name}/`, { token: s.rootToken });
      const start = () =>
        call(s, "POST", "/api/v1/orgs/acme/workflows/q/runs/", {
          token: u.token,
          raw: "{}",
          headers: {
            "content-type": "application/json",
            prefer: "respond-async",
            ...(key ? { "idempotency-key": `k-${n}` } : {}),
          },
        });
      const [deleted, started] =
        first === "the deletion"
          ? await heldTogether(s, "runs", [del, start])
          : (await heldTogether(s, "runs", [start, del])).reverse();
      expect(deleted!.status).toBe(204);
      const runs = await s.count(`runs WHERE created_by_name = '${name}'`);
      // SQLite runs them one after the other: the run may come first, and is then kept.
      if (!s.databaseUrl && started!.status === 202) expect(runs).toBe(1);
      else {
        expect(started!.json).toEqual(errorBody(401, "authentication_required", "Invalid token."));
        expect(started!.headers.get("www-authenticate")).toStartWith("Bearer");
        expect(runs).toBe(0);
      }
    },
  );
});
