import { expect, test } from "bun:test";
import { Lru } from "../../../src/jobs/lru.ts";

const keys = (l: Lru<string, unknown>, candidates: string[]) => candidates.filter((k) => l.has(k));

test("the least recently used key goes first; a get counts as a use", () => {
  const l = new Lru<string, number>(2);
  l.set("a", 1);
  l.set("b", 2);
  expect(l.get("a")).toBe(1); // a is now the newest: b goes next
  l.set("c", 3);
  expect(keys(l, ["a", "b", "c"])).toEqual(["a", "c"]);
});

test("getting the newest key again keeps the order (no re-insert needed)", () => {
  const l = new Lru<string, number>(2);
  l.set("a", 1);
  l.set("b", 2);
  expect(l.get("b")).toBe(2);
  expect(l.get("b")).toBe(2);
  l.set("c", 3); // a is the oldest
  expect(keys(l, ["a", "b", "c"])).toEqual(["b", "c"]);
  expect(l.get("a")).toBeUndefined();
});

test("after clear, and for a value that is itself undefined, the order still holds", () => {
  const l = new Lru<string, number | undefined>(2);
  l.set("a", 1);
  l.clear();
  expect(l.size).toBe(0);
  l.set("x", undefined);
  l.set("y", 2);
  expect(l.get("x")).toBeUndefined(); // present, and now the newest
  expect(l.has("x")).toBe(true);
  l.set("z", 3); // y is the oldest
  expect(keys(l, ["x", "y", "z"])).toEqual(["x", "z"]);
  expect(l.get("missing")).toBeUndefined();
  expect(l.size).toBe(2);
});
