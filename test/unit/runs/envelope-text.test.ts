// topLevelMembers: where an envelope's members sit in its text, so object content is stored as
// written (src/runs/intake/envelope-text.ts). Only for text JSON.parse accepted.
import { expect, test } from "bun:test";
import { topLevelMembers } from "../../../src/runs/intake/envelope-text.ts";

const values = (text: string) =>
  topLevelMembers(text)?.map((m) => [m.key, text.slice(m.start, m.end)]) ?? null;

test("each member's value is its exact text: numbers, spacing and duplicate keys inside kept", () => {
  const P = '{"id": 9007199254740993, "price": 19.0, "k": 1, "k": 2, "x": 1e400}';
  expect(values(`{"content": ${P}, "filename": "a.json"}`)).toEqual([
    ["content", P],
    ["filename", '"a.json"'],
  ]);
  expect(values(` \n\t{ "content"\r\n :\t[ 1 , [2, {"a": "]}"}] ]  }\n`)).toEqual([
    ["content", '[ 1 , [2, {"a": "]}"}] ]'],
  ]);
});

test("keys are unescaped; escaped quotes and backslashes in strings do not end them", () => {
  expect(values('{"con\\u0074ent": {"a\\"}": "\\\\"}, "b\\\\": "x\\"y"}')).toEqual([
    ["content", '{"a\\"}": "\\\\"}'],
    ["b\\", '"x\\"y"'],
  ]);
});

test("scalars run to the next delimiter; duplicates are all listed, in order", () => {
  expect(values('{"a":-1.5e+3,"b":true , "c":null,"a":false}')).toEqual([
    ["a", "-1.5e+3"],
    ["b", "true"],
    ["c", "null"],
    ["a", "false"],
  ]);
  expect(values("{}")).toEqual([]);
  expect(values(" { } ")).toEqual([]);
});

test("not an object: null", () => {
  expect(topLevelMembers("[1]")).toBeNull();
  expect(topLevelMembers('"{}"')).toBeNull();
});

test("a deep value is scanned without recursion", () => {
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  expect(values(`{"content":${deep}}`)).toEqual([["content", deep]]);
});
