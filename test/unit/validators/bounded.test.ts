import { describe, expect, test } from "bun:test";
import Format from "typebox/format";
import { WORKFLOWS } from "../../../scripts/bench/fixtures.ts";
import {
  LINEAR_FORMATS,
  MAX_SCHEMA_WEIGHT,
  runsInBoundedTime,
  schemaWeight,
} from "../../../src/validators/json-schema/bounded.ts";
import { compileUserRegex } from "../../../src/validators/shared/user-regex.ts";
import { parseYaml } from "../../../src/validators/shared/yaml.ts";

const KIB16 = 16 * 1024;
const judge = (schema: unknown, extra: Record<string, unknown> = {}) =>
  runsInBoundedTime({ schema, ...extra });
const str = (pattern: string) => ({ type: "string", pattern });

/** The CPU time `run` takes (ms): time spent waiting for a core is not counted. */
function cpuTime(run: () => unknown): number {
  const t = process.cpuUsage();
  run();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1000;
}

/**
 * How the work grows with the input, measured against itself rather than a clock: the time on a
 * 16 KiB input over the time on sixteen 1 KiB ones. About 1 when linear, about 16 when quadratic
 * (exponential: far more), on a fast machine or a busy one alike. A fixed time bound instead
 * either fails under load or is too loose to catch a quadratic case.
 *
 * Both sides are warmed up, then measured in alternation, the least of 5 each. Measured once
 * each, in order, the self-check below read 2.7–4.8 instead of 16 inside the whole suite (never
 * alone): the small side ran first, before the engine's busy compiler thread had optimized the
 * code, the large side after. CPU time rather than the clock, because a long run is preempted
 * more often than a short one on a loaded machine.
 */
function growth(run: (size: number) => unknown, size = KIB16): number {
  const smalls = () => {
    for (let i = 0; i < 16; i++) run(size / 16);
  };
  const large = () => run(size);
  for (let i = 0; i < 3; i++) {
    smalls();
    large();
  }
  let s = Number.POSITIVE_INFINITY;
  let l = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    s = Math.min(s, cpuTime(smalls));
    l = Math.min(l, cpuTime(large));
  }
  return l / Math.max(s, 0.05);
}

describe("pattern weight", () => {
  test("a pattern weighs its RE2 program size: the most steps one character can cost", () => {
    const cost = (p: string) => {
      const r = compileUserRegex(p);
      if (!r.ok) throw new Error(r.message);
      return r.regex.cost;
    };
    expect(cost("^[a-z]{2}$")).toBeLessThan(10);
    expect(cost("^(a+)+$")).toBeLessThan(10); // nested repeats cost nothing more on RE2
    expect(cost("^[a-z]{1,600}$")).toBeGreaterThan(MAX_SCHEMA_WEIGHT);
  });
});

describe("runsInBoundedTime: rules", () => {
  test("the benchmark's order schema runs inline", () => {
    expect(runsInBoundedTime(WORKFLOWS.order.steps[0].config)).toBe(true);
    expect(schemaWeight(WORKFLOWS.order.steps[0].config)).toBe(76);
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

  test("pattern: every pattern runs in linear time; one heavier than the whole budget is not inline", () => {
    expect(judge(str("^[a-z]{2}$"))).toBe(true);
    expect(judge(str("^(a|a)*b|^a*c$"))).toBe(true);
    expect(judge(str("^[a-z]{1,600}$"))).toBe(false);
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
    ["definitions", (s: unknown) => ({ definitions: { d: s }, $ref: "#/definitions/d" })],
  ])("a pattern nested under %s is judged", (_where, wrap) => {
    expect(judge(wrap(str("^[a-z]{2}$")))).toBe(true);
    expect(judge(wrap(str("^[a-z]{1,600}$")))).toBe(false);
  });

  test("a pattern that never applies (an unreferenced $defs) weighs nothing", () => {
    expect(judge({ $defs: { d: str("^[a-z]{1,600}$") } })).toBe(true);
  });

  test("patternProperties keys are patterns", () => {
    expect(judge({ patternProperties: { "^x-[a-z]{1,8}$": { type: "string" } } })).toBe(true);
    expect(judge({ patternProperties: { "^x-[a-z]{1,600}$": { type: "string" } } })).toBe(false);
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
    const bad = { ...resources, "https://example.com/loose.json": { format: "hostname" } };
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

  test("YAML mappings are checked for duplicate keys in linear time (yaml's own check was quadratic)", () => {
    // 8,192 keys against sixteen mappings of 512: a pairwise comparison does 16× the work.
    const docs = new Map(
      [512, 8192].map((n) => [n, Array.from({ length: n }, (_, i) => `key${i}: ${i}`).join("\n")]),
    );
    expect(growth((n) => parseYaml(docs.get(n)!), 8192)).toBeLessThan(5);
  });

  test("the growth measure tells a quadratic check from a linear one", () => {
    // Each position scans to the end: quadratic in the input's length.
    const quadratic = (t: string) => {
      let n = 0;
      for (let i = 0; i < t.length; i++) for (let j = i; j < t.length; j++) n += t.charCodeAt(j) & 1;
      return n;
    };
    // At 8 KiB a quadratic check does 16× the work of sixteen 512-byte ones: far above the 5 the
    // linear tests allow, even when a busy machine's noise halves the measured ratio (at 4 KiB
    // the small runs were near the timer's floor and it read 2.7 once).
    const sized = new Map([512, 8192].map((n) => [n, "a".repeat(n)]));
    expect(growth((n) => quadratic(sized.get(n)!), 8192)).toBeGreaterThan(5);
  });
});
