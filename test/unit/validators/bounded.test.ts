import { describe, expect, test } from "bun:test";
import Format from "typebox/format";
import { WORKFLOWS } from "../../../scripts/bench/fixtures.ts";
import {
  LINEAR_FORMATS,
  MAX_SCHEMA_WEIGHT,
  runsInBoundedTime,
  schemaWeight,
} from "../../../src/validators/json-schema/bounded.ts";
import { MAX_REGEX_LENGTH } from "../../../src/validators/limits.ts";
import {
  isBoundedRegex,
  MAX_REGEX_STEPS_PER_CHAR,
  regexStepsPerChar,
} from "../../../src/validators/shared/safe-regex.ts";

const KIB16 = 16 * 1024;
const judge = (schema: unknown, extra: Record<string, unknown> = {}) =>
  runsInBoundedTime({ schema, ...extra });
const str = (pattern: string) => ({ type: "string", pattern });

/** The least of 5 timings of `run` (ms): load and preemption only ever add time. */
function minTime(run: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    run();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

/**
 * How the work grows with the input, measured against itself rather than a clock: the time on a
 * 16 KiB input over the time on sixteen 1 KiB ones. About 1 when linear, about 16 when quadratic
 * (exponential: far more), on a fast machine or a busy one alike. A fixed time bound instead
 * either fails under load or is too loose to catch a quadratic case.
 */
function growth(run: (size: number) => unknown, size = KIB16): number {
  const small = minTime(() => {
    for (let i = 0; i < 16; i++) run(size / 16);
  });
  const large = minTime(() => run(size));
  return large / Math.max(small, 0.05);
}

describe("isBoundedRegex", () => {
  test.each([
    "^SKU-[0-9]{4}$",
    "^ord-[0-9]{6}$",
    "^[A-Z]{2}$",
    "^(foo|bar)-\\d{1,3}$",
    "abc",
    "^[a-z*+]{3}$",
    "^\\*\\+\\{\\}\\?$",
    "^https?://",
    "^\\p{Lu}{2}$",
    "^(?<year>\\d{4})-(?:0[1-9]|1[0-2])$",
    "^a{1,3}?b$",
  ])("linear: %p", (p) => {
    expect(isBoundedRegex(p)).toBe(true);
  });

  test.each([
    ["a repeated atom", "^a+$"],
    ["a star", ".*"],
    ["an open range", "^\\d{2,}$"],
    ["a repeated group", "(a|b)*"],
    ["a lazy repeat", "^a+?$"],
    ["a numbered backreference", "^(\\w)\\1$"],
    ["a named backreference", "^(?<c>\\w)\\k<c>$"],
    ["a repeat inside a lookahead", "(?=.*x)"],
    ["a repeat inside a lookbehind", "(?<=\\d+)x"],
    ["a repeat inside a class-then-group", "^[*+](x+)$"],
    ["too long", `^${"a".repeat(2000)}$`],
    ["invalid", "["],
    ["invalid under the u flag (a lone brace)", "^a{$"],
  ])("not linear: %s", (_why, p) => {
    expect(isBoundedRegex(p)).toBe(false);
  });

  test("a pattern of exactly MAX_REGEX_LENGTH is judged; one character more is not", () => {
    expect(isBoundedRegex(`^${"a".repeat(MAX_REGEX_LENGTH - 1)}`)).toBe(true);
    expect(isBoundedRegex(`^${"a".repeat(MAX_REGEX_LENGTH)}`)).toBe(false);
  });

  test("choices multiply: ? is 2, {m,n} is n-m+1, alternatives add", () => {
    expect(regexStepsPerChar("^(foo|bar)-\\d{1,3}$")).toBe(6);
    expect(regexStepsPerChar("^a?b?c?$")).toBe(8);
    expect(regexStepsPerChar("^(a|b|c)$")).toBe(3);
  });

  test("a repeated group counts every combination of its choices: (a|a){10} is 2^10 paths", () => {
    // Brief's simpler product (2 × 1) would pass it; it takes ~240 ms on 16 KiB of "a".
    expect(regexStepsPerChar("(a|a){10}b")).toBe(1024 * 11);
    expect(isBoundedRegex("(a|a){10}b")).toBe(false);
    expect(isBoundedRegex("^(a|ab){1,10}c$")).toBe(false); // 2 + 4 + … + 1024 paths
    expect(isBoundedRegex("^(a|ab){1,7}c$")).toBe(true); // 254 paths
  });

  test("an unanchored pattern restarts at every position, so its width counts too", () => {
    expect(regexStepsPerChar("^[a-z]{0,200}x")).toBe(201);
    expect(regexStepsPerChar("[a-z]{0,200}x")).toBe(201 * 201);
    expect(isBoundedRegex("^[a-z]{0,200}x")).toBe(true);
    expect(isBoundedRegex("[a-z]{0,200}x")).toBe(false);
    expect(isBoundedRegex("^a|[a-z]{0,200}x")).toBe(false); // one branch unanchored is enough
    expect(isBoundedRegex("^a|^[a-z]{0,200}x")).toBe(true);
  });

  test("patterns judged linear take linear time on adversarial input up to 16 KiB", () => {
    const cases: Array<[string, (n: number) => string[]]> = [
      ["^(a|ab){1,7}c$", (n) => ["ab".repeat(n / 2)]],
      ["(a|ab){1,3}c", (n) => ["ab".repeat(n / 2)]],
      ["(a|a){5}b", (n) => ["a".repeat(n)]], // 32 paths × 6: close to the budget
      ["^(a|a){7}b", (n) => Array.from({ length: n / 13 }, () => "a".repeat(10))], // 254 paths, per string
      ["[a-z]{0,15}x", (n) => ["a".repeat(n)]],
    ];
    for (const [pattern, inputs] of cases) {
      expect(regexStepsPerChar(pattern)).toBeLessThanOrEqual(MAX_REGEX_STEPS_PER_CHAR);
      const re = new RegExp(pattern, "u");
      const sized = new Map([KIB16 / 16, KIB16].map((n) => [n, inputs(n)]));
      expect(growth((n) => sized.get(n)!.map((s) => re.test(s)))).toBeLessThan(5);
    }
  });

  test("the growth measure tells a quadratic pattern from a linear one", () => {
    // Unanchored with a wide repeat: every start position scans ahead (not judged bounded).
    const re = /[a-z]{0,100000}x/u;
    expect(isBoundedRegex(re.source)).toBe(false);
    const sized = new Map([256, 4096].map((n) => [n, "a".repeat(n)]));
    expect(growth((n) => re.test(sized.get(n)!), 4096)).toBeGreaterThan(5);
  });
});

describe("runsInBoundedTime: rules", () => {
  test("the benchmark's order schema runs inline", () => {
    expect(runsInBoundedTime(WORKFLOWS.order.steps[0].config)).toBe(true);
    expect(schemaWeight(WORKFLOWS.order.steps[0].config)).toBe(52);
  });

  test("anything but a json_schema config is not inline", () => {
    for (const config of [
      null,
      "schema",
      [],
      {},
      { schema: "x" },
      { schema: [] },
      { schema: {}, resources: [] },
    ])
      expect(runsInBoundedTime(config)).toBe(false);
    expect(runsInBoundedTime({ schema: {}, resources: { "https://example.com/a.json": "x" } })).toBe(false);
    expect(runsInBoundedTime({ schema: {} })).toBe(true);
  });

  test("pattern: linear passes, backtracking fails", () => {
    expect(judge(str("^[a-z]{2}$"))).toBe(true);
    expect(judge(str("^[a-z]+$"))).toBe(false);
  });

  test.each([
    ["items", (s: unknown) => ({ type: "array", items: s })],
    ["prefixItems", (s: unknown) => ({ prefixItems: [true, s] })],
    ["anyOf", (s: unknown) => ({ anyOf: [{ type: "null" }, s] })],
    ["not", (s: unknown) => ({ not: s })],
    ["if/else", (s: unknown) => ({ if: { type: "string" }, else: s })],
    ["properties", (s: unknown) => ({ properties: { a: { properties: { b: s } } } })],
    ["patternProperties", (s: unknown) => ({ patternProperties: { "^x-": s } })],
    ["additionalProperties", (s: unknown) => ({ additionalProperties: s })],
    ["propertyNames", (s: unknown) => ({ propertyNames: s })],
    ["$defs, referenced", (s: unknown) => ({ $defs: { d: s }, $ref: "#/$defs/d" })],
    ["$defs, unreferenced", (s: unknown) => ({ $defs: { d: s } })],
    ["definitions", (s: unknown) => ({ definitions: { d: s }, $ref: "#/definitions/d" })],
  ])("a pattern nested under %s is judged", (_where, wrap) => {
    expect(judge(wrap(str("^[a-z]{2}$")))).toBe(true);
    expect(judge(wrap(str("^[a-z]+$")))).toBe(false);
  });

  test("patternProperties keys are patterns", () => {
    expect(judge({ patternProperties: { "^x-[a-z]{1,8}$": { type: "string" } } })).toBe(true);
    expect(judge({ patternProperties: { "^x-.*$": { type: "string" } } })).toBe(false);
  });

  test("format: only the linear formats, unless formats are not asserted", () => {
    for (const f of LINEAR_FORMATS) expect(judge({ format: f })).toBe(true);
    expect(judge({ format: "hostname" })).toBe(false);
    expect(judge({ format: "x-custom" })).toBe(false);
    expect(judge({ format: "hostname" }, { assert_formats: false })).toBe(true);
    expect(judge({ items: { format: "x-custom" } }, { assert_formats: false })).toBe(true);
    expect(judge({ items: { format: "x-custom" } }, { assert_formats: true })).toBe(false);
  });

  test("uniqueItems: true is quadratic, false is nothing", () => {
    expect(judge({ type: "array", uniqueItems: false })).toBe(true);
    expect(judge({ type: "array", uniqueItems: true })).toBe(false);
    expect(judge({ items: { items: { uniqueItems: true } } })).toBe(false);
  });

  test.each([
    ["unevaluatedProperties", false],
    ["unevaluatedItems", false],
    ["contentMediaType", "application/json"],
    ["contentEncoding", "base64"],
    ["contentSchema", { type: "object" }],
  ])("%s is never inline", (keyword, value) => {
    expect(judge({ properties: { a: { type: "string" } } })).toBe(true);
    expect(judge({ properties: { a: { type: "string", [keyword]: value } } })).toBe(false);
  });
});

describe("runsInBoundedTime: references", () => {
  const resources = {
    "https://example.com/sku.json": { $defs: { sku: str("^SKU-[0-9]{4}$") }, type: "string" },
  };

  test("a local $ref is followed; one to a missing location is not", () => {
    expect(judge({ $defs: { a: { type: "string" } }, $ref: "#/$defs/a" })).toBe(true);
    expect(judge({ $defs: { a: { type: "string" } }, $ref: "#/$defs/missing" })).toBe(false);
    expect(judge({ $defs: { a: { $anchor: "A", type: "string" } }, items: { $ref: "#A" } })).toBe(true);
  });

  test("a $ref naming a resource is followed; any other URI (a meta-schema) is not", () => {
    const sku = "https://example.com/sku.json";
    expect(judge({ $ref: sku }, { resources })).toBe(true);
    expect(judge({ $ref: `${sku}#/$defs/sku` }, { resources })).toBe(true);
    expect(judge({ $ref: sku })).toBe(false);
    expect(judge({ $ref: "https://json-schema.org/draft/2020-12/schema" }, { resources })).toBe(false);
    expect(judge({ $dynamicRef: "https://example.com/other.json#meta" }, { resources })).toBe(false);
    expect(judge({ $recursiveRef: "https://example.com/other.json" }, { resources })).toBe(false);
  });

  test("every resource is judged, referenced or not", () => {
    const bad = { ...resources, "https://example.com/loose.json": str("^.*$") };
    expect(judge({ type: "object" }, { resources })).toBe(true);
    expect(judge({ type: "object" }, { resources: bad })).toBe(false);
  });

  test("a recursive schema is not inline: its work grows with the document's depth", () => {
    const tree = { type: "object", properties: { children: { type: "array", items: { $ref: "#" } } } };
    expect(judge({ ...tree, properties: { children: { type: "array" } } })).toBe(true);
    expect(judge(tree)).toBe(false);
    expect(judge({ $dynamicAnchor: "node", items: { $dynamicRef: "#node" } })).toBe(false);
  });

  test("a schema that unfolds into a huge tree is not inline, however small the document", () => {
    const doubling = (levels: number) => {
      const $defs: Record<string, unknown> = { a0: { type: "string" } };
      for (let i = 1; i <= levels; i++)
        $defs[`a${i}`] = { allOf: [{ $ref: `#/$defs/a${i - 1}` }, { $ref: `#/$defs/a${i - 1}` }] };
      return { $defs, $ref: `#/$defs/a${levels}` };
    };
    expect(judge(doubling(3))).toBe(true);
    expect(judge(doubling(22))).toBe(false); // 2^22 checks of a0 on one value: ~110 ms
  });

  test("the weight counts each schema object, enum value and required name where it applies", () => {
    const allOf = (n: number) => ({
      items: { allOf: Array.from({ length: n }, () => ({ type: "number" })) },
    });
    expect(judge(allOf(MAX_SCHEMA_WEIGHT - 10))).toBe(true);
    expect(judge(allOf(MAX_SCHEMA_WEIGHT))).toBe(false);
    const values = Array.from({ length: MAX_SCHEMA_WEIGHT }, (_, i) => i);
    expect(judge({ $defs: { big: { enum: values } }, type: "integer" })).toBe(true); // never applied
    expect(judge({ $defs: { big: { enum: values } }, $ref: "#/$defs/big" })).toBe(false);
  });

  test("an embedded $id changes what a reference means: with references, not inline", () => {
    expect(judge({ $defs: { a: { $id: "https://example.com/a.json", type: "string" } } })).toBe(true);
    expect(
      judge({ $defs: { a: { $id: "https://example.com/a.json", type: "string" } }, $ref: "#/$defs/a" }),
    ).toBe(false);
  });
});

describe("LINEAR_FORMATS", () => {
  // Inputs built to make typebox's checks (node_modules/typebox/build/format) backtrack.
  const inputsOf = (N: number): Record<string, string[]> => ({
    date: ["1".repeat(N), `2020-${"1".repeat(N)}`],
    "date-time": [
      `2020-01-01T00:00:00Z[${"a/".repeat(N / 2)}`,
      `2020-01-01T00:00:00Z${"[u-ca=a-b]".repeat(N / 10)}!`,
      `2020-01-01T00:00:00.${"1".repeat(N)}x`,
      `2020-01-01${"T".repeat(N)}`,
    ],
    time: [`00:00:00.${"1".repeat(N)}x`],
    email: [
      `${"a".repeat(N)}`,
      `${"a.".repeat(N / 2)}@`,
      `a@${"a-".repeat(N / 2)}`,
      `a@${`${"a".repeat(61)}.`.repeat(N / 62)}!`,
      `"${"\\a".repeat(N / 2)}@`,
      `a@[IPv6:${":".repeat(N)}!`,
    ],
    uuid: ["0".repeat(N), "00000000-".repeat(N / 9)],
    ipv4: ["1.".repeat(N / 2), "1".repeat(N)],
    duration: [
      `P${"1".repeat(N)}`,
      `P1Y1M${"1".repeat(N)}X`,
      `PT${"1".repeat(N)}`,
      `P1DT1H1M${"1".repeat(N)}!`,
    ],
  });

  const small = inputsOf(KIB16 / 16);
  const large = inputsOf(KIB16);

  test("every linear format has adversarial inputs here", () => {
    expect(Object.keys(large).sort()).toEqual([...LINEAR_FORMATS].sort());
  });

  test.each(Object.keys(large))("%s rejects adversarial input up to 16 KiB in linear time", (format) => {
    large[format]!.forEach((s, i) => {
      expect(Format.Test(format, s)).toBe(false);
      const at = (n: number) => (n === KIB16 ? s : small[format]![i]!);
      expect(growth((n) => Format.Test(format, at(n)))).toBeLessThan(5);
    });
  });
});
