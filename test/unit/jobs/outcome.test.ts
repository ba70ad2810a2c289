// Error messages shown to people: one line, no stack, no server paths.
import { expect, test } from "bun:test";
import { shortError, shortWorkerError } from "../../../src/jobs/outcome.ts";

test.each([
  ["1 | throw x\n    ^\nerror: boom async\n      at <anonymous> (/srv/w.ts:3:57)\n", "boom async"],
  ["TypeError: top level nope\n      at /srv/throws.ts:1:11\n", "TypeError: top level nope"],
  [
    'BuildMessage: ModuleNotFound resolving "./nope.ts" (entry point)',
    'BuildMessage: ModuleNotFound resolving "./nope.ts" (entry point)',
  ],
  [
    'DOMException {\n  line: 31,\n  name: "DataCloneError",\n  message: "The object can not be cloned.",\n}',
    "DataCloneError: The object can not be cloned.",
  ],
])("shortWorkerError(%#)", (formatted, expected) => {
  expect(shortWorkerError(formatted)).toBe(expected);
});

test("shortError keeps the first line, names non-plain errors, and clips", () => {
  expect(shortError(new Error("first\n    at /secret.ts:1"))).toBe("first");
  expect(shortError(new RangeError("Out of memory"))).toBe("RangeError: Out of memory");
  expect(shortError("x".repeat(500))).toHaveLength(200);
});
