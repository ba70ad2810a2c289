import { describe, expect, test } from "bun:test";
import { parseRetryDelays } from "../../../src/webhooks/dispatcher.ts";
import { eventsForStatus } from "../../../src/webhooks/payload.ts";
import { newMessageId, newSecret, sign, signatureHeaders } from "../../../src/webhooks/signing.ts";

// The Standard Webhooks specification's published test vector.
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

describe("signing", () => {
  test("reproduces the Standard Webhooks reference signature", () => {
    expect(sign(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });
  test("two secrets give two space-separated signatures, current first", () => {
    const other = newSecret();
    const h = signatureHeaders([VECTOR.secret, other], VECTOR.id, VECTOR.timestamp, VECTOR.body);
    expect(h).toEqual({
      "webhook-id": VECTOR.id,
      "webhook-timestamp": "1614265330",
      "webhook-signature": `${VECTOR.signature} ${sign(other, VECTOR.id, VECTOR.timestamp, VECTOR.body)}`,
    });
  });
  test("secrets are whsec_ + 32 random bytes; message ids have no dot", () => {
    const a = newSecret();
    expect(Buffer.from(a.slice(6), "base64")).toHaveLength(32);
    expect(a).not.toBe(newSecret());
    expect(newMessageId()).toMatch(/^msg_[0-9a-f]{32}$/);
  });
});

describe("events and settings", () => {
  test("each final status emits run.completed, plus its own event when it has one", () => {
    expect(eventsForStatus("succeeded")).toEqual(["run.completed", "run.succeeded"]);
    expect(eventsForStatus("failed")).toEqual(["run.completed", "run.failed"]);
    expect(eventsForStatus("error")).toEqual(["run.completed", "run.error"]);
    expect(eventsForStatus("canceled")).toEqual(["run.completed"]);
    expect(eventsForStatus("timed_out")).toEqual(["run.completed"]);
  });
  test("retry delays parse from a comma-separated list, and nothing else", () => {
    expect(parseRetryDelays("5000, 300000,1800000")).toEqual([5000, 300000, 1800000]);
    for (const bad of ["", "5s", "1,,2", "-1"]) expect(() => parseRetryDelays(bad)).toThrow();
  });
});
