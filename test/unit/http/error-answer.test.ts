// errorAnswer (src/http/errors.ts): what a thrown error becomes on the wire.
import { describe, expect, test } from "bun:test";
import { ValidationError, t } from "elysia";
import { errorAnswer } from "../../../src/http/errors.ts";
import { createLogger } from "../../../src/lib/log.ts";

const log = createLogger("silent");
const request = new Request("http://localhost/api/v1/orgs/");

describe("errorAnswer", () => {
  test("a request that breaks its schema is the client's 400, naming the field", async () => {
    const e = new ValidationError("body", t.Object({ name: t.String() }), { name: 7 });
    const r = errorAnswer(log, e, request, {});
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ code: "invalid_request", status: 400 });
  });
  test("an answer that breaks its own response schema is our 500, saying nothing of it", async () => {
    const e = new ValidationError("response", t.Object({ id: t.Integer() }), { id: "x" });
    const r = errorAnswer(log, e, request, {});
    expect(r.status).toBe(500);
    expect(await r.json()).toEqual({
      detail: "An internal error occurred.",
      code: "internal_error",
      status: 500,
      errors: [],
    });
  });
});
