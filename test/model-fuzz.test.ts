// Model-based (stateful) random testing of the management API (test/helpers/model-fuzz/): random
// sequences of operations on orgs, members and roles, users, tokens, workflows, steps, versions,
// runs (sync, async, held, canceled, with Idempotency-Keys new and reused) and webhooks, by several
// users with different roles in two orgs, some of them sent together. After each step: the status
// the reference model predicts (docs/access.md's 401/403/404 order, 409, 412, 422), never a 5xx,
// every list walked page by page equal to the model's (no duplicates, no gaps, stable order),
// nothing of another org visible or addressable, every body valid against the served OpenAPI
// document (Ajv), and the audit log holding exactly the step's writes (docs/audit.md).
//
// The fuzz.test.ts next door sends hostile single requests; this one follows state. A fixed seed
// and a bounded number of steps keep it within a minute on each backend; for a long hunt:
//   MODEL_FUZZ_SEEDS=1,2,3 MODEL_FUZZ_STEPS=5000 bun test --timeout 0 test/model-fuzz.test.ts
// A failure names its seed and step and prints the requests before it; replay it with that seed
// (MODEL_FUZZ_TRACE=FILE writes all of them).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { modelFuzz } from "./helpers/model-fuzz/fuzz.ts";
import { type TestServer, startTestServer } from "./helpers/server.ts";
import { type Receiver, startReceiver } from "./helpers/webhook-receiver.ts";

const SEEDS = (process.env.MODEL_FUZZ_SEEDS ?? "20261129").split(",").map(Number);
const STEPS = Number(process.env.MODEL_FUZZ_STEPS ?? 800);

let receiver: Receiver;
beforeAll(() => {
  receiver = startReceiver();
});
afterAll(() => receiver.stop());

for (const seed of SEEDS)
  test(`seed ${seed}: ${STEPS} steps agree with the model`, async () => {
    // Webhooks deliver to the receiver on 127.0.0.1.
    const s: TestServer = await startTestServer({ webhook_allow_private: true });
    try {
      const r = await modelFuzz(s, receiver, { seed, steps: STEPS });
      expect(r.steps).toBe(STEPS);
      // Every kind of operation ran, and writes were not all refused.
      expect(Object.keys(r.ops).filter((k) => !k.endsWith(" ms")).length).toBe(28);
      expect(r.statuses["POST 201"]).toBeGreaterThan(STEPS / 20);
    } finally {
      await s.close();
    }
  }, 600_000);
