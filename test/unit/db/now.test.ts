// now() formats one ISO string per millisecond: it must still move with the clock.
import { afterEach, expect, setSystemTime, test } from "bun:test";
import { now } from "../../../src/db/util.ts";

afterEach(() => setSystemTime());

test("now() is the clock's millisecond, as ISO 8601, and follows it", () => {
  setSystemTime(new Date("2026-01-01T00:00:00.000Z"));
  expect(now()).toBe("2026-01-01T00:00:00.000Z");
  expect(now()).toBe("2026-01-01T00:00:00.000Z");
  setSystemTime(new Date("2026-01-01T00:00:00.001Z"));
  expect(now()).toBe("2026-01-01T00:00:00.001Z");
  setSystemTime(new Date("2025-12-31T23:59:59.999Z"));
  expect(now()).toBe("2025-12-31T23:59:59.999Z");
});
