import { beforeAll, describe, expect, test } from "bun:test";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { MAX_REGEX_COST } from "../../../src/validators/limits.ts";
import { run } from "./helpers.ts";

// The XML engine is loaded on demand (src/validators/shared/libxml.ts), as a worker does.
beforeAll(() => loadLibxml());

type Rule = { id: string; expr: string; message: string; severity?: string; when?: string };
const assert = (
  rules: Rule[],
  content: string,
  type: Parameters<typeof run>[3],
  extra: Record<string, unknown> = {},
) => run("assertions", { rules, ...extra }, content, type);
const view = (r: ReturnType<typeof assert>) =>
  r.findings.map((f) => ({
    code: f.code,
    severity: f.severity,
    rule: f.rule,
    path: f.path,
    line: f.line,
    column: f.column,
    message: f.message,
  }));

describe("assertions: JSON and YAML", () => {
  const order = '{"id": 7, "total": 12.5, "items": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 0}]}';

  test("a passing rule yields nothing; a failing one yields assertion.failed with the message filled in", () => {
    const r = assert(
      [
        { id: "has-items", expr: "size(data.items) > 0", message: "order has no items" },
        {
          id: "qty",
          expr: "data.items.all(i, i.qty > 0)",
          message: "order {{ data.id }} has an item with qty {{ data.items[1].qty }}",
        },
      ],
      order,
      "JSON",
    );
    expect(view(r)).toEqual([
      {
        code: "assertion.failed",
        severity: "error",
        rule: "qty",
        path: null,
        line: null,
        column: null,
        message: "order 7 has an item with qty 0",
      },
    ]);
  });

  test("integers beyond 2^53 stay exact 64-bit ints (JSON and YAML); beyond 64 bits they are doubles", () => {
    const rule = (expr: string) => [{ id: "r", expr, message: "id {{ data.id }}" }];
    const messages = (r: ReturnType<typeof assert>) => r.findings.map((f) => `${f.code}: ${f.message}`);
    for (const [type, doc] of [
      ["JSON", '{"id": 9007199254740993, "s": "12345678901234567890"}'],
      ["YAML", 'id: 9007199254740993\ns: "12345678901234567890"\n'],
    ] as const) {
      expect(
        messages(assert(rule("data.id == 9007199254740993 && type(data.id) == int"), doc, type)),
      ).toEqual([]);
      expect(messages(assert(rule("data.id == 9007199254740992"), doc, type))).toEqual([
        "assertion.failed: id 9007199254740993",
      ]);
      expect(messages(assert(rule("data.s == '12345678901234567890'"), doc, type))).toEqual([]);
    }
    for (const [type, doc] of [
      ["JSON", '{"id": 9223372036854775807}'],
      ["YAML", "id: 9223372036854775807\n"],
    ] as const) {
      expect(messages(assert(rule("data.id + 1 > 0"), doc, type))).toEqual([
        'assertion.error: rule "r" could not be evaluated: integer overflow in +',
      ]);
    }
    expect(messages(assert(rule("type(data.id) == double"), '{"id": 92233720368547758070}', "JSON"))).toEqual(
      [],
    );
  });

  test("integers are CEL ints, other numbers doubles; severity and when are honoured", () => {
    const rules = [
      { id: "next", expr: "data.id + 1 == 8", message: "int arithmetic" },
      {
        id: "total",
        expr: "data.total < 10.0",
        message: "total {{ data.total }} too high",
        severity: "warning",
      },
      { id: "skipped", expr: "false", message: "never", when: "data.id == 1" },
    ];
    expect(view(assert(rules, order, "JSON")).map((f) => [f.rule, f.severity, f.message])).toEqual([
      ["total", "warning", "total 12.5 too high"],
    ]);
  });

  // Fuzzing the built server (2026-11-29): a `when` that reads the data passes the save as dyn;
  // when it yielded a string or a number the rule was skipped, and the step passed unchecked.
  test("a when that yields no bool is assertion.error at the rule's severity, not a skipped rule", () => {
    const rules = [{ id: "w", expr: "false", message: "m", when: "data.flag", severity: "warning" }];
    expect(view(assert(rules, '{"flag": "yes"}', "JSON"))).toEqual([
      {
        severity: "warning",
        code: "assertion.error",
        message: 'rule "w" could not be evaluated (when): it returned yes, not a bool',
        path: null,
        line: null,
        column: null,
        rule: "w",
      },
    ]);
    expect(view(assert(rules, '{"flag": false}', "JSON"))).toEqual([]);
    expect(view(assert(rules, '{"flag": true}', "JSON")).map((f) => f.code)).toEqual(["assertion.failed"]);
  });

  test("a missing field is assertion.error (guard with has())", () => {
    const r = assert([{ id: "m", expr: "data.missing > 1", message: "x" }], order, "JSON");
    expect(r.findings.map((f) => f.code)).toEqual(["assertion.error"]);
    expect(r.findings[0].message).toContain("missing");
    expect(
      assert([{ id: "m", expr: "!has(data.missing) || data.missing > 1", message: "x" }], order, "JSON")
        .findings,
    ).toEqual([]);
  });

  test("a key whose value is null is present: has() and `in` say so, in the data and in literals", () => {
    const ok = (expr: string, doc: string, type: "JSON" | "YAML" = "JSON") =>
      assert([{ id: "r", expr, message: "m" }], doc, type).findings;
    for (const expr of [
      "has(data.n)",
      "'n' in data",
      "has({'a': null}.a)",
      "'a' in {'a': null}",
      "data.n == null",
      "!has(data.absent) && !('absent' in data)",
    ])
      expect(ok(expr, '{"a":1,"n":null}')).toEqual([]);
    expect(ok("has(data.n) && data.n == null", "a: 1\nn: ~\n", "YAML")).toEqual([]);
    expect(ok("!has({'a': 1}.b)", "{}")).toEqual([]);
  });

  test("per-row rules over a top-level array point at each element", () => {
    const r = assert(
      [{ id: "pos", expr: "row.n > 0", message: "n is {{ row.n }}" }],
      '[\n  {"n": 1},\n  {"n": -2}\n]',
      "JSON",
    );
    expect(view(r)).toEqual([
      {
        code: "assertion.failed",
        severity: "error",
        rule: "pos",
        path: "/1",
        line: 3,
        column: 3,
        message: "n is -2",
      },
    ]);
  });

  test("row on a non-array document is assertion.error", () => {
    expect(assert([{ id: "r", expr: "row.n > 0", message: "x" }], '{"n": 1}', "JSON").findings[0].code).toBe(
      "assertion.error",
    );
  });

  test("YAML documents", () => {
    const r = assert(
      [{ id: "v", expr: "data.version >= 2", message: "old version {{ data.version }}" }],
      "version: 1\n---\nversion: 3\n",
      "YAML",
    );
    expect(r.findings.map((f) => f.message)).toEqual(["old version 1"]);
  });

  test("in a YAML stream of several documents, a finding about a whole document is at that document", () => {
    // Without a position the findings of `data.a > 0` on documents 2 and 3 could not be told
    // apart; each is at its document's root node, as json_schema places a finding at path "".
    const r = assert(
      [
        { id: "a", expr: "has(data.a)", message: "no a" },
        { id: "r", expr: "row.a > 0", message: "x" },
      ],
      "a: 1\n---\nb: 1\n---\n# c\n  b: 😀\n---\n",
      "YAML",
    );
    expect(r.findings.map((f) => [f.code, f.rule, f.path, f.line, f.column])).toEqual([
      ["assertion.error", "r", null, 1, 1],
      ["assertion.failed", "a", null, 3, 1],
      ["assertion.error", "r", null, 3, 1],
      ["assertion.failed", "a", null, 6, 3],
      ["assertion.error", "r", null, 6, 3],
      ["assertion.failed", "a", null, 7, 4],
      ["assertion.error", "r", null, 7, 4],
    ]);
    // One document keeps the whole-document finding without a position (SARIF: line 1).
    const one = assert([{ id: "a", expr: "has(data.a)", message: "no a" }], "\nb: 1\n", "YAML");
    expect(one.findings.map((f) => [f.path, f.line, f.column])).toEqual([[null, null, null]]);
  });

  test("a non-bool result is assertion.error", () => {
    expect(assert([{ id: "d", expr: "data.id", message: "x" }], order, "JSON").findings[0].code).toBe(
      "assertion.error",
    );
  });

  test("unparsable data is the parser's finding", () => {
    expect(assert([{ id: "a", expr: "true", message: "x" }], "{", "JSON").findings[0].code).toBe(
      "json.syntax_error",
    );
  });
});

describe("assertions: XML and CSV", () => {
  test("XML: attributes with @, repeated elements as lists, values as strings", () => {
    const xml = '<order id="7"><item qty="2">A</item><item qty="0">B</item></order>';
    const rules = [
      { id: "id", expr: 'data.order["@id"] == "7"', message: "id" },
      { id: "qty", expr: 'data.order.item.all(i, int(i["@qty"]) > 0)', message: "an item has qty 0" },
    ];
    expect(assert(rules, xml, "XML").findings.map((f) => f.rule)).toEqual(["qty"]);
  });

  describe("XML: xml.lists makes elements lists even when they occur once", () => {
    const one = '<order id="1"><item qty="2"><note>a</note></item></order>';
    const two =
      '<order id="2"><item qty="2"><note>a</note></item><item qty="3"><note>b</note></item></order>';
    const rule = { id: "qty", expr: 'data.order.item.all(i, int(i["@qty"]) > 0)', message: "bad qty" };
    const results = (config: Record<string, unknown>) =>
      [one, two].map((doc) => assert([rule], doc, "XML", config).findings.map((f) => f.message));

    test("auto (the default): the one-item order breaks the rule written for two", () => {
      expect(results({})).toEqual([[expect.stringContaining("could not be evaluated")], []]);
    });
    test("a path from the root makes `item` a list in both", () => {
      expect(results({ xml: { lists: ["order/item"] } })).toEqual([[], []]);
    });
    test("//name matches the element at any depth", () => {
      const notes = { id: "n", expr: "data.order.item.all(i, size(i.note) >= 1)", message: "m" };
      for (const doc of [one, two])
        expect(assert([notes], doc, "XML", { xml: { lists: ["//item", "//note"] } }).findings).toEqual([]);
    });
    test('"always": every element below the root is a list; attributes and text are not', () => {
      const r = assert(
        [{ id: "a", expr: 'data.order["@id"] == "1" && data.order.item[0].note[0] == "a"', message: "m" }],
        one,
        "XML",
        { xml: { lists: "always" } },
      );
      expect(r.findings).toEqual([]);
    });
    test("a bad path is refused at save, naming it", () => {
      const message =
        'a path names elements from the root, separated by "/" (order/item), or starts with "//" (//item)';
      expect(
        checkStepConfig("assertions", { rules: [rule], xml: { lists: ["order/item", "order//item", ""] } }),
      ).toEqual([
        { field: "xml.lists[1]", code: "invalid", message },
        { field: "xml.lists[2]", code: "invalid", message },
      ]);
      expect(checkStepConfig("assertions", { rules: [rule], xml: { lists: "sometimes" } })).toEqual([
        { field: "xml.lists", code: "invalid", message: 'must be "auto", "always" or a list of paths' },
      ]);
    });
  });

  test("XML: not well-formed is reported, rules are not run", () => {
    expect(assert([{ id: "a", expr: "false", message: "x" }], "<a><b></a>", "XML").findings[0].code).toBe(
      "xml.not_well_formed",
    );
  });

  test("CSV: per-row rules with row numbers and positions; data holds every row", () => {
    const csv = "sku,qty\na,2\nb,0\nc,5\n";
    const rules = [
      { id: "qty", expr: "int(row.qty) > 0", message: "{{ row.sku }}: qty must be positive" },
      { id: "count", expr: "size(data) == 3", message: "three rows" },
      { id: "sum", expr: "data.map(r, int(r.qty)).exists(q, q > 4)", message: "some big" },
    ];
    expect(view(assert(rules, csv, "CSV"))).toEqual([
      {
        code: "assertion.failed",
        severity: "error",
        rule: "qty",
        path: "/rows/3",
        line: 3,
        column: 1,
        message: "b: qty must be positive",
      },
    ]);
  });

  test("findings are capped with truncated", () => {
    const csv = `n\n${"0\n".repeat(30)}`;
    const r = assert([{ id: "n", expr: "row.n != '0'", message: "zero" }], csv, "CSV", { max_findings: 4 });
    expect(r.findings).toHaveLength(4);
    expect(r.truncated).toBe(true);
  });
});

describe("assertions: strings are code points (cel-spec), in the strings extension too", () => {
  const failing = (expr: string) =>
    assert([{ id: "r", expr, message: "m" }], '{"a": 1}', "JSON").findings.map((f) => f.message);
  test.each([
    "'😀a'.substring(1) == 'a'",
    "'😀a'.substring(0, 1) == '😀'",
    "'😀a'.charAt(1) == 'a' && '😀a'.charAt(2) == ''",
    "'😀a'.indexOf('a') == 1",
    "'a😀a😀'.indexOf('😀', 2) == 3",
    "'a😀a'.lastIndexOf('a') == 2 && 'a😀a'.lastIndexOf('a', 1) == 0",
    "'abc'.substring(1) == 'bc' && 'abc'.indexOf('c', 1) == 2",
  ])("%s", (expr) => {
    expect(failing(expr)).toEqual([]);
  });

  test("bounds are counted in code points", () => {
    expect(failing("'😀a'.charAt(3) == ''")).toEqual([
      'rule "r" could not be evaluated: index 3 out of bounds [0, 2)',
    ]);
  });
});

describe("assertions: strings order by code point (cel-spec, String and Bytes Values)", () => {
  const failing = (expr: string) =>
    assert([{ id: "r", expr, message: "m" }], '{"a": 1}', "JSON").findings.map((f) => f.message);
  // U+FFFF is one UTF-16 unit above the surrogates that spell U+1F600: JavaScript put it after.
  test.each([
    "'\\uFFFF' < '\\U0001F600' && '\\uFFFF' <= '\\U0001F600'",
    "'\\U0001F600' > '\\uFFFF' && '\\U0001F600' >= '\\uFFFF'",
    "!('\\uFFFF' > '\\U0001F600') && !('\\uFFFF' >= '\\U0001F600')",
    "['\\U0001F600', '\\uFFFF'].sort() == ['\\uFFFF', '\\U0001F600']",
    "['\\U0001F600', '\\uFFFF'].min() == '\\uFFFF' && ['\\uFFFF', '\\U0001F600'].max() == '\\U0001F600'",
    "'a' < 'b' && 'ab' > 'a' && 'a' <= 'a' && !('b' < 'a')",
  ])("%s", (expr) => {
    expect(failing(expr)).toEqual([]);
  });
});

describe("assertions: format's %f rounds the exact double, ties to even (Go's strconv)", () => {
  const failing = (expr: string) =>
    assert([{ id: "r", expr, message: "m" }], '{"a": 1}', "JSON").findings.map((f) => f.message);
  test.each([
    // 2.675 is 2.67499999999999982236431605997495353221893310546875 as a double.
    "'%.2f'.format([2.675]) == '2.67'",
    "'%.2f'.format([0.125]) == '0.12' && '%.2f'.format([0.375]) == '0.38'",
    "'%.1f'.format([0.25]) == '0.2' && '%.0f'.format([2.5]) == '2' && '%.1f'.format([-2.25]) == '-2.2'",
    "'%.2f'.format([-0.001]) == '-0.00' && '%f'.format([3.14]) == '3.140000'",
    "'%.2f'.format([1e22]) == '10000000000000000000000.00'",
    "'%.3f, %d, %s, %%'.format([1.0005, 3, 'x']) == '1.000, 3, x, %'",
  ])("%s", (expr) => {
    expect(failing(expr)).toEqual([]);
  });

  test("other clauses and the engine's errors are unchanged", () => {
    expect(failing("'%.2f'.format([1]) == ''")).toEqual([
      'rule "r" could not be evaluated: format(): fixed-point clause can only be used on doubles',
    ]);
    expect(failing("'%.2f %d'.format([1.5]) == ''")).toEqual([
      'rule "r" could not be evaluated: format(): too few arguments for format string',
    ]);
  });
});

describe("assertions: save-time checks", () => {
  const issues = (rules: unknown) => checkStepConfig("assertions", { rules });
  test("syntax and type errors name the field", () => {
    expect(issues([{ id: "a", expr: "data.x >", message: "m" }])[0]).toMatchObject({
      field: "rules[0].expr",
      code: "invalid_expression",
    });
    expect(
      issues([
        { id: "a", expr: "true", message: "m" },
        { id: "b", expr: "1 + 'a'", message: "m" },
      ])[0].field,
    ).toBe("rules[1].expr");
    expect(issues([{ id: "a", expr: "'text'", message: "m" }])[0].message).toContain("bool");
    expect(issues([{ id: "a", expr: "unknown_var", message: "m" }])[0].field).toBe("rules[0].expr");
    expect(issues([{ id: "a", expr: "true", when: "1", message: "m" }])[0].field).toBe("rules[0].when");
    expect(issues([{ id: "a", expr: "true", message: "bad {{ data. }}" }])[0].field).toBe("rules[0].message");
  });
  test("shape: ids unique, required keys, limits", () => {
    expect(
      issues([
        { id: "a", expr: "true", message: "m" },
        { id: "a", expr: "true", message: "m" },
      ])[0].code,
    ).toBe("duplicate");
    expect(issues([{ id: "a", expr: "true" }])[0]).toMatchObject({
      field: "rules[0].message",
      code: "required",
    });
    expect(issues([])[0].field).toBe("rules");
    expect(issues([{ id: "a", expr: "x".repeat(5000), message: "m" }])[0].field).toBe("rules[0].expr");
    expect(issues([{ id: "a", expr: "true", message: "m", severity: "fatal" }])[0].field).toBe(
      "rules[0].severity",
    );
  });
});

describe("assertions: regular expressions", () => {
  test("matches() runs RE2 in linear time: a nested quantifier is fine, even on a hostile input", () => {
    const rules = [{ id: "a", expr: 'data.s.matches("^(a+)+$")', message: "no match" }];
    const r = assert(rules, JSON.stringify({ s: `${"a".repeat(5000)}!` }), "JSON");
    expect(view(r).map((f) => [f.code, f.message])).toEqual([["assertion.failed", "no match"]]);
  });

  test("a pattern from the data is not compiled past the cost bound: the rule is an error, never a pass", () => {
    // Compiled as it came, `a{1000}` a thousand times over (7 KB) took RE2 0.9 s and ~500 MB.
    const rules = [{ id: "a", expr: "!data.s.matches(data.p)", message: "matched" }];
    for (const p of [
      "a{1000}".repeat(30),
      "(a{100}){100}".repeat(3),
      "\\Q[\\E" + "a{1000}".repeat(21) + "]",
    ]) {
      const r = assert(rules, JSON.stringify({ s: "b", p }), "JSON");
      expect(view(r)).toEqual([
        {
          severity: "error",
          code: "assertion.error",
          message: `rule "a" could not be evaluated: the pattern ${JSON.stringify(p.length > 60 ? `${p.slice(0, 60)}…` : p)} would expand to more than ${MAX_REGEX_COST} positions (its counted repetitions, multiplied where nested): it is not compiled`,
          path: null,
          line: null,
          column: null,
          rule: "a",
        },
      ]);
    }
    // Within it, the same rule runs.
    expect(view(assert(rules, JSON.stringify({ s: "b", p: "a{1000}".repeat(19) }), "JSON"))).toEqual([]);
  });

  test("a literal pattern past the cost bound is refused at save", () => {
    expect(
      checkStepConfig("assertions", {
        rules: [{ id: "a", expr: `data.s.matches("${"a{1000}".repeat(21)}")`, message: "m" }],
      }),
    ).toEqual([
      {
        field: "rules[0].expr",
        code: "invalid_expression",
        message: `invalid regular expression: the pattern ${JSON.stringify(`${"a{1000}".repeat(21).slice(0, 60)}…`)} would expand to more than ${MAX_REGEX_COST} positions (its counted repetitions, multiplied where nested): it is not compiled`,
      },
    ]);
  });

  test("a literal pattern RE2 cannot compile is refused at save", () => {
    const r = checkStepConfig("assertions", {
      rules: [{ id: "a", expr: 'data.s.matches("(a")', message: "m" }],
    });
    expect(r).toEqual([
      {
        field: "rules[0].expr",
        code: "invalid_expression",
        message: expect.stringMatching(/^invalid regular expression: .*missing closing \)/),
      },
    ]);
  });
});

describe("assertions: hostile keys", () => {
  test('"__proto__" is an ordinary key, not a prototype', () => {
    const r = run(
      "assertions",
      { rules: [{ id: "p", expr: "has(data.__proto__) && !has(data.polluted)", message: "m" }] },
      '{"__proto__": {"polluted": 1}}',
      "JSON",
    );
    expect(r.findings).toEqual([]);
  });
});

describe("assertions: issue #23's CEL cases, through the validator", () => {
  const truth = (expr: string) => assert([{ id: "t", expr, message: expr }], "{}", "JSON").findings;
  test("once refused at save, now true", () => {
    for (const expr of [
      "b'a' < b'b' && b'' <= b'\\x00'",
      "[1, 'one'] == [1, 'one'] && 1.0 == 1",
      "{'content-type': 'json'}.`content-type` == 'json'",
      "int(42u) == 42 && int(timestamp('1970-01-01T00:01:00Z')) == 60",
      "duration(duration('1s')) == duration('1s') && timestamp(timestamp(0)) == timestamp(0)",
      "has({'a': 1}.a) && .99 < 1.0",
    ])
      expect(truth(expr)).toEqual([]);
  });
  test("once wrong, now right", () => {
    for (const expr of [
      "b'\\303\\277' == b'ÿ'",
      "dyn(3u) in [5, 4, 3, 2, 1] && [1, 2u] == [1.0, 2.0] && {1: 'a'} == {1u: 'a'}",
      "!(dyn(9223372036854775807) < 9223372036854775808.0)",
    ])
      expect(truth(expr)).toEqual([]);
  });
  test("once values, now errors: at evaluation, or at save for literal map keys", () => {
    for (const expr of [
      "-(-9223372036854775807 - 1) != 0",
      "int(9223372036854775807.0) != 0",
      "string(b'\\xff') != ''",
    ])
      expect(truth(expr).map((x) => x.code)).toEqual(["assertion.error"]);
    const saved = (expr: string) =>
      checkStepConfig("assertions", { rules: [{ id: "k", expr, message: "m" }] });
    expect(saved("{'a': 1, 'a': 2}.a == 1")).toEqual([
      { field: "rules[0].expr", code: "invalid_expression", message: "the map literal repeats the key a" },
    ]);
    for (const [expr, kind] of [
      ["{1.5: 1}[1.5] == 1", "double"],
      ["{null: 1}[null] == 1", "null"],
    ])
      expect(saved(expr)).toEqual([
        {
          field: "rules[0].expr",
          code: "invalid_expression",
          message: `a map key must be an int, uint, bool or string, not ${kind}`,
        },
      ]);
    const doc = JSON.stringify({ k: 1.5 });
    expect(
      assert([{ id: "k", expr: "{data.k: 1}.size() == 1", message: "m" }], doc, "JSON").findings[0].message,
    ).toBe('rule "k" could not be evaluated: a map key must be an int, uint, bool or string');
  });
});
