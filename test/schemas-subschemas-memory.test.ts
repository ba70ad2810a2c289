// The meta-validation of a schema's `$defs` members (src/validators/json-schema/subschemas.ts)
// told a member by splitting its JSON Pointer, which flattened it, and kept that pointer for the
// member: a ~1 MB stored schema of 4,000 `$defs` members under a 480 KB spine of keys made the
// check thread hold 4,000 × 480 KB (1.9 GB; 60,000 members: the process was killed for memory).
// Measured as the process's peak resident memory: the check thread is a thread of this process.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("ann", "acme", "author")).token;
});
afterAll(() => s.close());

/** Peak resident memory of this process so far, bytes (getrusage reports kilobytes). */
const peakRss = () => process.resourceUsage().maxRSS * 1024;

test("a schema of 4,000 $defs members under a 480 KB spine: its 400, without gigabytes of pointers", async () => {
  // Draft 7 knows no $defs: its meta-schema does not reach them, so each is checked on its own.
  let deep: Record<string, unknown> = {
    $defs: Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`m${i}`, {}])),
  };
  for (let d = 0; d < 100; d++) deep = { properties: { [`k${d}`.padEnd(4800, "x")]: deep } };
  const schema = {
    $schema: "http://json-schema.org/draft-07/schema#",
    $defs: { bad: { type: 5 } },
    ...deep,
  };
  const before = peakRss();
  const r = await call(s, "POST", "/api/v1/orgs/acme/schemas/", {
    token: author,
    body: { uri: "https://example.com/spine.json", kind: "json_schema", schema },
  });
  expect(r.status).toBe(400);
  expect(r.json).toEqual({
    detail: "The schema is invalid.",
    code: "invalid_request",
    status: 400,
    errors: [
      {
        field: "schema",
        code: "invalid_schema",
        message:
          "/$defs/bad/type: must be equal to one of the allowed values (meta-schema #/properties/type/anyOf/0)",
      },
      {
        field: "schema",
        code: "invalid_schema",
        message: "/$defs/bad/type: must be array (meta-schema #/properties/type/anyOf/1)",
      },
    ],
  });
  // The body parsed, the schema and its copy to the thread: tens of MB. Each pointer kept whole: 1.9 GB.
  expect(peakRss() - before).toBeLessThan(512 * 1048576);
});
