// The published config schema of assertions (GET /api/v1/validators/) and the save agree on
// xml.lists: a path one refuses, the other refuses too.
import { describe, expect, test } from "bun:test";
import Schema from "typebox/schema";
import { checkConfig } from "../../../src/validators/assertions/config.ts";
import { getValidator } from "../../../src/validators/registry.ts";

const published = Schema.Compile(getValidator("assertions")!.configSchema as never);
const withLists = (lists: unknown) => ({
  rules: [{ id: "r", expr: "true", message: "m" }],
  xml: { lists },
});

describe("assertions: the published config schema says which xml.lists the save accepts", () => {
  const cases: [unknown, boolean][] = [
    ["auto", true],
    ["always", true],
    [["order/item", "//item", "a:b/c-d"], true],
    [["order/"], false],
    [["/order"], false],
    [["order//item"], false],
    [["order item"], false],
    [[""], false],
    [["///item"], false],
    ["sometimes", false],
  ];
  for (const [lists, ok] of cases)
    test(`${JSON.stringify(lists)}: ${ok ? "accepted" : "refused"} by both`, () => {
      expect(published.Check(withLists(lists))).toBe(ok);
      const issues = checkConfig(withLists(lists));
      expect(issues).toEqual(ok ? [] : [expect.objectContaining({ code: "invalid" })]);
      if (!ok) expect(issues[0]!.field).toStartWith("xml.lists");
    });
});
