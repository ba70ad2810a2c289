// A stored schema is checked against what it references when it is saved, never against what
// references it (docs/decisions.md, "A stored schema's change is not checked against the stored
// schemas referencing it"): a PUT that makes another stored schema's `$ref` point to an invalid
// schema is accepted, as a DELETE of a referenced schema is; each later save reaching the
// referrer (its own PUT, a step's) names the break, and saved steps keep their snapshot.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
const SCHEMAS = "/api/v1/orgs/acme/schemas/";
const HELD = "https://example.com/held.json";
const MID = "https://example.com/mid.json";

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
});
afterAll(() => s.close());

const body = (uri: string, schema: unknown) => ({
  token: author,
  body: { uri, kind: "json_schema", schema },
});

test("a PUT breaking a stored schema's $ref into it is 200; the referrer's next save is the 400 naming it", async () => {
  const held = await call(s, "POST", SCHEMAS, body(HELD, { x: { y: { type: "string" } } }));
  const mid = await call(s, "POST", SCHEMAS, body(MID, { $ref: "held.json#/x/y" }));
  expect([held.status, mid.status]).toEqual([201, 201]);
  const put = await call(s, "PUT", `${SCHEMAS}${held.json.id}/`, body(HELD, { x: { y: { type: 5 } } }));
  expect([put.status, put.json.schema]).toEqual([200, { x: { y: { type: 5 } } }]);
  const again = await call(s, "PUT", `${SCHEMAS}${mid.json.id}/`, body(MID, { $ref: "held.json#/x/y" }));
  expect([again.status, again.json]).toEqual([
    400,
    {
      detail: "The schema is invalid.",
      code: "invalid_request",
      status: 400,
      errors: [0, 1].map((i) => ({
        field: "schema",
        code: "invalid_schema",
        message:
          `$ref "held.json#/x/y" at # points to an invalid schema: ${HELD}#/x/y/type: ` +
          `${i === 0 ? "must be equal to one of the allowed values" : "must be array"} (meta-schema #/allOf/3/properties/type/anyOf/${i})`,
      })),
    },
  ]);
  // Nothing changed by the refused PUT.
  const got = await call(s, "GET", `${SCHEMAS}${mid.json.id}/`, { token: author });
  expect([got.status, got.json.schema]).toEqual([200, { $ref: "held.json#/x/y" }]);
});

test("a DELETE of a stored schema another one references is 204 too; the referrer's next save names it", async () => {
  const uri = "https://example.com/gone.json";
  const gone = await call(s, "POST", SCHEMAS, body(uri, { x: { y: { type: "string" } } }));
  const ref = await call(
    s,
    "POST",
    SCHEMAS,
    body("https://example.com/ref.json", { $ref: "gone.json#/x/y" }),
  );
  expect([gone.status, ref.status]).toEqual([201, 201]);
  expect((await call(s, "DELETE", `${SCHEMAS}${gone.json.id}/`, { token: author })).status).toBe(204);
  const again = await call(
    s,
    "PUT",
    `${SCHEMAS}${ref.json.id}/`,
    body("https://example.com/ref.json", { $ref: "gone.json#/x/y" }),
  );
  expect([again.status, again.json]).toEqual([
    400,
    {
      detail: "The schema is invalid.",
      code: "invalid_request",
      status: 400,
      errors: [
        {
          field: "schema",
          code: "unresolvable_ref",
          message:
            `$ref "gone.json#/x/y" at # points to ${uri}, which is neither part of this schema nor stored by ` +
            "the organization; remote schemas are never fetched: inline it under $defs or store it " +
            "(POST /api/v1/orgs/{org_slug}/schemas/)",
        },
      ],
    },
  ]);
});
