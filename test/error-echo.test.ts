// An error message repeats at most 100 characters of the client's input (src/lib/text.ts,
// `quote`): a 1 MB username made a 1 MB 400, a 10 KB validator name a 10 KB one. The run
// intake's messages are in test/runs-content-type.test.ts.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const cut = (x: string) => `${x.slice(0, 100)}…`;
const big = "a".repeat(1_000_000);

test("400 adding a member who does not exist", async () => {
  const r = await call(s, "POST", "/api/v1/orgs/acme/members/", {
    token: s.rootToken,
    body: { username: big, role: "viewer" },
  });
  expect(r.json).toEqual(
    errorBody(400, "invalid_request", "No such user.", [
      { field: "username", code: "not_found", message: `There is no user "${cut(big)}".` },
    ]),
  );
  expect(r.status).toBe(400);
});

test("400 a step naming an unknown validator", async () => {
  const validator = "v".repeat(10_000);
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug: "w",
      name: "W",
      allowed_file_types: ["JSON"],
      steps: [{ name: "s", validator, config: {} }],
    },
  });
  expect(r.json).toEqual(
    errorBody(400, "invalid_request", "The workflow definition is invalid.", [
      {
        field: "steps[0].validator",
        code: "unknown_validator",
        message: `Unknown validator "${cut(validator)}"; see GET /api/v1/validators/.`,
      },
    ]),
  );
  expect(r.status).toBe(400);
});

test("415 a body that is not JSON names at most 100 characters of its Content-Type", async () => {
  const type = `text/${"p".repeat(5000)}`;
  const r = await call(s, "POST", "/api/v1/users/me/tokens/", {
    token: s.rootToken,
    raw: "{}",
    headers: { "content-type": type },
  });
  expect(r.json).toEqual(
    errorBody(
      415,
      "unsupported_media_type",
      `This endpoint takes a JSON object: send it as Content-Type: application/json, not "${cut(type)}".`,
    ),
  );
  expect(r.status).toBe(415);
});
