// The assertions validator's bounds (issue #19.4) and its error texts (issue #23): a rule over its
// evaluation budget ends the step in error with a finding that says why; no engine-internal text
// reaches an author.
import { describe, expect, test } from "bun:test";
import { CEL_COST_LIMIT } from "../../../src/validators/limits.ts";
import { run } from "./helpers.ts";

const numbers = JSON.stringify({ n: Array.from({ length: 1000 }, (_, i) => i) });

/** 18 nested doublings of a 1000-element list: 262 million elements (the rule of issue #19). */
function doublings(levels: number): string {
  let expr = "x17.map(v, v * 2).size() > 0";
  for (let i = levels - 1; i >= 0; i--)
    expr = `cel.bind(x${i}, ${i === 0 ? "data.n" : `x${i - 1}`} + ${i === 0 ? "data.n" : `x${i - 1}`}, ${expr})`;
  return expr;
}

const budgetFinding = (rule: string) => ({
  severity: "error" as const,
  code: "assertion.budget_exceeded",
  message: `rule "${rule}" was stopped: its evaluation used more than its budget of ${CEL_COST_LIMIT.toLocaleString("en")} cost units`,
  path: null,
  line: null,
  column: null,
  rule,
});

describe("assertions: the evaluation budget", () => {
  test("the hostile rule of issue #19 ends the step in error with a finding that says why", () => {
    const r = run(
      "assertions",
      { rules: [{ id: "bomb", expr: doublings(18), message: "m" }] },
      numbers,
      "JSON",
    );
    expect(r).toEqual({
      findings: [budgetFinding("bomb")],
      truncated: false,
      error: budgetFinding("bomb").message,
    });
  });

  test("findings of earlier rules are kept; later rules do not run", () => {
    const rules = [
      { id: "first", expr: "size(data.n) == 0", message: "not empty" },
      { id: "quadratic", expr: "data.n.all(a, data.n.all(b, data.n.all(c, a + b + c >= 0)))", message: "m" },
      { id: "never", expr: "false", message: "not reached" },
    ];
    const r = run("assertions", { rules }, numbers, "JSON");
    expect(r.findings.map((f) => [f.rule, f.code])).toEqual([
      ["first", "assertion.failed"],
      ["quadratic", "assertion.budget_exceeded"],
    ]);
    expect(r.error).toBe(budgetFinding("quadratic").message);
  });

  test("an `||` that absorbs the budget's error does not hide it", () => {
    const expr = "data.n.all(a, data.n.all(b, data.n.all(c, a + b + c >= 0))) || true";
    const r = run("assertions", { rules: [{ id: "absorbed", expr, message: "m" }] }, numbers, "JSON");
    expect(r.findings).toEqual([budgetFinding("absorbed")]);
  });

  test("strings that double are stopped at the size limit before the budget", () => {
    let expr = "size(s15) > 0";
    for (let i = 15; i >= 0; i--)
      expr = `cel.bind(s${i}, ${i === 0 ? "data.s" : `s${i - 1}`} + ${i === 0 ? "data.s" : `s${i - 1}`}, ${expr})`;
    const r = run(
      "assertions",
      { rules: [{ id: "s", expr, message: "m" }] },
      JSON.stringify({ s: "x".repeat(1000) }),
      "JSON",
    );
    expect(r.findings.map((f) => f.code)).toEqual(["assertion.budget_exceeded"]);
    expect(r.error).toMatch(/makes a string of [\d,]+ characters, over the limit of 8,388,608/);
  });

  test("replace() and join() are measured before they build: |s|² characters are never allocated", () => {
    const doc = JSON.stringify({ s: "x".repeat(10_000) });
    for (const [expr, length] of [
      ["size(data.s.replace('', data.s)) > 0", "100,020,000"],
      ["size(lists.range(2000).map(i, data.s).join()) > 0", "20,000,000"],
    ]) {
      const r = run("assertions", { rules: [{ id: "big", expr, message: "m" }] }, doc, "JSON");
      expect(r.error).toBe(
        `rule "big" was stopped: its evaluation makes a string of ${length} characters, over the limit of 8,388,608`,
      );
    }
  });

  test("a 12 MB string from the data: split('') is charged per part before the parts exist", () => {
    const doc = JSON.stringify({ s: "x".repeat(12_000_000) });
    const rules = [
      { id: "fine", expr: "size(data.s) == 12000000 && data.s.lowerAscii().startsWith('x')", message: "m" },
      { id: "parts", expr: "data.s.split('').size() > 0", message: "m" },
    ];
    const r = run("assertions", { rules }, doc, "JSON");
    expect(r.findings.map((f) => [f.rule, f.code])).toEqual([["parts", "assertion.budget_exceeded"]]);
  });

  test("== and `in` on nested lists are charged by every element they may compare", () => {
    const square = Array.from({ length: 1000 }, () => Array.from({ length: 1000 }, () => 0));
    const doc = JSON.stringify({ a: square, b: square });
    for (const expr of [
      "lists.range(1000).all(i, data.a == data.b)",
      "lists.range(1000).all(i, data.a[0] in data.b)",
    ]) {
      const r = run("assertions", { rules: [{ id: "eq", expr, message: "m" }] }, doc, "JSON");
      expect(r.findings.map((f) => f.code)).toEqual(["assertion.budget_exceeded"]);
    }
  });

  test("a placeholder over its budget stops the step too", () => {
    const rules = [{ id: "p", expr: "false", message: `{{ ${doublings(18)} }}` }];
    expect(run("assertions", { rules }, numbers, "JSON").findings.map((f) => f.code)).toEqual([
      "assertion.budget_exceeded",
    ]);
  });

  test("linear rules over 50,000 rows fit: map, filter, sum, distinct, all", () => {
    const rows = JSON.stringify({ rows: Array.from({ length: 50_000 }, (_, i) => ({ id: i, amount: 1.5 })) });
    const rules = [
      { id: "sum", expr: "data.rows.map(r, r.amount).sum() == 75000.0", message: "sum" },
      { id: "ids", expr: "data.rows.map(r, r.id).distinct().size() == size(data.rows)", message: "ids" },
      { id: "all", expr: "data.rows.filter(r, r.amount > 1.0).all(r, r.id >= 0)", message: "all" },
    ];
    expect(run("assertions", { rules }, rows, "JSON")).toEqual({ findings: [], truncated: false });
  });

  test("each row is its own evaluation: a per-row rule's cost never adds up across rows", () => {
    // 200 rows × 100,000 units each: twice the budget in all, a hundredth of it per row.
    const csv = `n\n${Array.from({ length: 200 }, (_, i) => `${i}\n`).join("")}`;
    const expr = "size(lists.range(100000)) > 0 && int(row.n) >= 0";
    expect(run("assertions", { rules: [{ id: "r", expr, message: "m" }] }, csv, "CSV").findings).toEqual([]);
  });
});

describe("assertions: error texts", () => {
  const errorOf = (expr: string, doc = '{"a": 1, "s": "x", "l": [1]}') => {
    const r = run(
      "assertions",
      { rules: [{ id: "r", expr: `dyn(${expr}) == true`, message: "m" }] },
      doc,
      "JSON",
    );
    return r.findings[0]?.message;
  };
  const cases: Array<[string, string]> = [
    ["data.a + data.s", `no overload of '+' takes (int, string)`],
    ["data.missing", "no such key: 'missing'"],
    ["data.l[3]", "index 3 is out of range"],
    ["data.a / 0", "division by zero"],
    ["-(-9223372036854775807 - 1)", "integer overflow"],
    ["int('12a')", 'cannot convert "12a" to int'],
    ["int('')", 'cannot convert "" to int'],
    ["double(' 1')", 'cannot convert " 1" to double'],
    ["int(1e99)", "integer overflow"],
    ["string(b'\\xff')", "the bytes are not valid UTF-8"],
    ["timestamp('yesterday')", "not a timestamp in RFC 3339 format (2024-01-31T12:00:00Z)"],
    ["[].max()", "max() of an empty list"],
    ["['a', 1].sum()", "sum() needs numbers; element 0 is string"],
    ["[1, 'a'].sort()", "sort() cannot order string and int"],
    ["{data.s: 1, 'x': 2}", "the map repeats the key x"],
  ];
  for (const [expr, message] of cases)
    test(`${expr}: "${message}"`, () => {
      expect(errorOf(expr)).toBe(`rule "r" could not be evaluated: ${message}`);
    });

  test("no message names the engine, JavaScript or a file", () => {
    for (const [expr] of cases)
      expect(errorOf(expr)).not.toMatch(/BigInt|undefined|TypeError|overload '|\.js|\.ts|_\+_|@/);
  });
});
