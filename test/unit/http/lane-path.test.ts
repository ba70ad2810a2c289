// Which requests the main listener hands to the sync-run lane (src/http/threads/lane.ts): a POST
// with a bearer token; the lane itself then takes only a plain run path. Pure functions.
import { describe, expect, test } from "bun:test";
import { createRunLane, lanePath } from "../../../src/http/threads/lane.ts";

const req = (method: string, path: string, headers: Record<string, string> = {}) =>
  new Request(`http://127.0.0.1:9/${path.replace(/^\//, "")}`, { method, headers });
const RUN = "/api/v1/orgs/acme/workflows/order/runs/";

describe("lanePath", () => {
  test("a POST with a bearer token: its path and query", () => {
    expect(lanePath(req("POST", RUN, { authorization: "Bearer abc" }))).toBe(RUN);
    expect(lanePath(req("POST", `${RUN}?version=2`, { authorization: "bearer abc" }))).toBe(
      `${RUN}?version=2`,
    );
  });
  test("anything else: null", () => {
    expect(lanePath(req("GET", RUN, { authorization: "Bearer abc" }))).toBeNull();
    expect(lanePath(req("POST", RUN))).toBeNull();
    expect(lanePath(req("POST", RUN, { authorization: "Basic abc" }))).toBeNull();
    expect(lanePath(req("POST", RUN, { cookie: "assay_session=x" }))).toBeNull();
  });
});

describe("the lane takes plain run paths only", () => {
  const never = () => {
    throw new Error("not reached");
  };
  const parts = {
    log: { debug() {}, info() {}, warn() {}, error() {} } as never,
    enterRun: never,
    authenticate: never,
    startRun: never,
  };
  const lane = createRunLane({ ...parts, cors: false });
  test.each([
    `${RUN}?version=2`,
    "/api/v1/orgs/ac%20me/workflows/order/runs/",
    "/api/v1/orgs/acme/workflows/order/runs",
    "/api/v1/orgs/acme/workflows/",
    "/api/v1/orgs/acme/workflows/order/runs/x/",
  ])("%s: null", (path) => {
    expect(lane(req("POST", path), path, null)).toBeNull();
  });
  test("with CORS on: null, even for a plain path", () => {
    expect(createRunLane({ ...parts, cors: true })(req("POST", RUN), RUN, null)).toBeNull();
  });
});
