import { expect, test } from "bun:test";
import { uuidv7 } from "../../src/lib/uuid.ts";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("uuidv7: version 7 and variant bits, unique, strictly increasing across pool refills", () => {
  // 5,000 ids: many in the same millisecond (the counter), and ~20 refills of the random pool.
  const ids = Array.from({ length: 5000 }, () => uuidv7());
  expect(ids.filter((x) => !V7.test(x))).toEqual([]);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids.filter((x, i) => i > 0 && ids[i - 1]! >= x)).toEqual([]);
});

test("uuidv7: the first 48 bits are the current Unix time in ms", () => {
  const before = Date.now();
  const id = uuidv7();
  const ms = Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
  expect(ms).toBeGreaterThanOrEqual(before);
  expect(ms).toBeLessThanOrEqual(Date.now() + 4096); // at most the counter's carry ahead
});
