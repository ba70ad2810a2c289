// ASSAY_MAX_QUEUE_PER_ORG: 0 means half the queue (at least one run); never more than the queue.
import { describe, expect, test } from "bun:test";
import { loadConfig, queuePerOrg } from "../../src/config.ts";

describe("queuePerOrg", () => {
  test("0 is half of max_queue, at least 1", () => {
    expect(queuePerOrg({ max_queue: 10_000, max_queue_per_org: 0 })).toBe(5_000);
    expect(queuePerOrg({ max_queue: 3, max_queue_per_org: 0 })).toBe(1);
    expect(queuePerOrg({ max_queue: 1, max_queue_per_org: 0 })).toBe(1);
  });
  test("a set share is kept, up to the queue itself", () => {
    expect(queuePerOrg({ max_queue: 100, max_queue_per_org: 80 })).toBe(80);
    expect(queuePerOrg({ max_queue: 100, max_queue_per_org: 500 })).toBe(100);
  });
  test("read from the environment like every setting", () => {
    expect(loadConfig({ ASSAY_MAX_QUEUE_PER_ORG: "40" }).max_queue_per_org).toBe(40);
    expect(queuePerOrg(loadConfig({}))).toBe(5_000);
    expect(() => loadConfig({ ASSAY_MAX_QUEUE_PER_ORG: "-1" })).toThrow();
  });
});
