// throttle (src/lib/log.ts): one line of a kind per window, the next one saying how many were left out.
import { expect, test } from "bun:test";
import { throttle } from "../../../src/lib/log.ts";

test("one line per kind and window; the next carries the count of those left out", () => {
  let t = 0;
  const once = throttle(60_000, () => t);
  const lines: Array<[string, { repeated?: number }]> = [];
  const say = (kind: string) => once(kind, (r) => lines.push([kind, r]));
  for (let i = 0; i < 100; i++) say("database unavailable"); // a burst of 503s
  say("pass failed");
  expect(lines).toEqual([
    ["database unavailable", {}],
    ["pass failed", {}],
  ]);
  t = 59_999;
  say("database unavailable");
  expect(lines).toHaveLength(2); // still inside the window: counted
  t = 60_000;
  say("database unavailable");
  say("database unavailable");
  expect(lines.at(-1)).toEqual(["database unavailable", { repeated: 100 }]);
  expect(lines).toHaveLength(3);
  t = 200_000;
  say("database unavailable"); // one left out since the last line
  expect(lines.at(-1)).toEqual(["database unavailable", { repeated: 1 }]);
  t = 400_000;
  say("database unavailable"); // none left out: no count
  expect(lines.at(-1)).toEqual(["database unavailable", {}]);
});
