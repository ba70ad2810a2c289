// YAML read as YAML 1.2.2 says, where the yaml library (or our reader around it) did otherwise:
// findings of the syntax step and of the steps that read a YAML document's value.
import { describe, expect, test } from "bun:test";
import { run } from "./helpers.ts";

/** [severity, code, message, path, line, column] of each finding. */
const all = (slug: string, config: Record<string, unknown>, doc: string) =>
  run(slug, config, doc, "YAML").findings.map((f) => [
    f.severity,
    f.code,
    f.message,
    f.path,
    f.line,
    f.column,
  ]);
const syntax = (doc: string) => all("syntax", {}, doc);

describe("a core tag with content it cannot have is an error (YAML 1.2 §10.3.2)", () => {
  test.each([
    ["a: !!int abc", 'not an integer: "abc"'],
    ["a: !!int 1.5", 'not an integer: "1.5"'],
    ["a: !!bool maybe", 'not a boolean: "maybe"'],
    ["a: !!bool yes", 'not a boolean: "yes"'],
    ["a: !!null 1", 'not a null: "1"'],
    ["a: !!float x", 'not a float: "x"'],
  ])("%p: an error where the tag is (was an Unresolved tag warning)", (doc, message) => {
    expect(syntax(doc)).toEqual([["error", "yaml.syntax_error", message, null, 1, 4]]);
  });
  test("json_schema no longer checks the string the node was left as", () => {
    const schema = { properties: { a: { type: "string" } } };
    expect(all("json_schema", { schema }, "a: !!int abc")).toEqual([
      ["error", "yaml.syntax_error", 'not an integer: "abc"', null, 1, 4],
    ]);
  });
  test("every form the core schema has still reads as its value", () => {
    const schema = {
      properties: {
        a: { const: 15 },
        b: { const: 31 },
        c: { const: -12 },
        d: { const: true },
        e: { const: false },
        f: { const: null },
        g: { const: null },
        h: { const: 12 },
      },
    };
    const doc =
      "a: !!int 0o17\nb: !!int 0x1F\nc: !!int -12\nd: !!bool TRUE\ne: !!bool False\nf: !!null\ng: !!null ~\nh: !!int '12'\n";
    expect(all("json_schema", { schema }, doc)).toEqual([]);
    expect(syntax(doc)).toEqual([]);
  });
});

describe("every document is read as YAML 1.2, whatever its %YAML directive says (YAML 1.2.2 §6.8.1)", () => {
  const OLDER =
    "YAML 1.1 is read as YAML 1.2 (core schema): yes, no, on and off are strings, 0777 is the integer 777, << is an ordinary key";
  test("%YAML 2.0, a higher major version, is rejected with an error (was accepted silently)", () => {
    const error = [
      "error",
      "yaml.syntax_error",
      "YAML 2.0 is not read: a YAML 1.2 reader rejects a higher major version (YAML 1.2.2 §6.8.1)",
      null,
      1,
      7,
    ];
    expect(syntax("%YAML 2.0\n---\na: 1\n")).toEqual([error]);
    expect(all("json_schema", { schema: {} }, "%YAML 2.0\n---\na: 1\n")).toEqual([error]);
  });
  test("%YAML 1.1 is read with 1.2's types, and a warning says so", () => {
    const schema = {
      properties: {
        a: { const: "yes" },
        b: { const: 777 },
        c: { type: "array" },
        d: { type: "object", required: ["<<"], properties: { k: false } },
      },
    };
    const doc = "%YAML 1.1\n---\na: yes\nb: 0777\nc: !!omap [k: 1]\nx: &x {k: 1}\nd:\n  <<: *x\n";
    expect(all("json_schema", { schema }, doc)).toEqual([]);
    expect(syntax(doc)).toEqual([
      ["warning", "yaml.syntax_error", OLDER, null, 1, 7],
      ["warning", "yaml.syntax_error", "Unresolved tag: tag:yaml.org,2002:omap", null, 5, 4],
    ]);
  });
  test("a higher minor version is a warning; 1.2 and no directive say nothing", () => {
    expect(syntax("%YAML 1.3\n---\na: 1\n")).toEqual([
      ["warning", "yaml.syntax_error", "YAML 1.3 is read as YAML 1.2 (core schema)", null, 1, 7],
    ]);
    expect(syntax("%YAML 1.2\n---\na: 1\n")).toEqual([]);
    expect(syntax("a: 1\n")).toEqual([]);
  });
  test("each document's directive is its own", () => {
    expect(syntax("%YAML 1.1\n--- a\n...\n%YAML 2.0\n--- b\n").map((f) => [f[0], f[4], f[5]])).toEqual([
      ["warning", 1, 7],
      ["error", 4, 7],
    ]);
  });
});

describe("a document has only its own %TAG directives, as YAML 1.2 says (test suite QLJ7)", () => {
  const OLDER =
    "YAML 1.1 is read as YAML 1.2 (core schema): yes, no, on and off are strings, 0777 is the integer 777, << is an ordinary key";
  const unresolved = (handle: string, line: number) => [
    "error",
    "yaml.syntax_error",
    `Could not resolve tag: ${handle}`,
    null,
    line,
    4,
  ];
  test("after %YAML 1.1, a handle of the first document is an error at the tag in the next (was defined there)", () => {
    const doc = "%YAML 1.1\n%TAG !e! tag:example.com,2000:\n---\na: !e!foo 1\n---\nb: !e!bar 2\n";
    expect(syntax(doc)).toEqual([
      ["warning", "yaml.syntax_error", OLDER, null, 1, 7],
      ["warning", "yaml.syntax_error", "Unresolved tag: tag:example.com,2000:foo", null, 4, 4],
      unresolved("!e!bar", 6),
    ]);
    const schema = { properties: { b: { type: "integer" } } };
    expect(all("json_schema", { schema }, doc)).toEqual([unresolved("!e!bar", 6)]);
    // Two documents on: the same.
    const third = "%YAML 1.1\n%TAG !e! tag:example.com,2000:\n---\na: 1\n...\n---\nb: 2\n---\nc: !e!x 3\n";
    expect(syntax(third)).toEqual([
      ["warning", "yaml.syntax_error", OLDER, null, 1, 7],
      unresolved("!e!x", 9),
    ]);
  });
  test("a %TAG !! of the first document no longer turns the next one's !!int into an unknown tag", () => {
    const doc = "%YAML 1.1\n%TAG !! tag:example.com,2000:\n---\na: 1\n---\nb: !!int 2\n";
    expect(syntax(doc)).toEqual([["warning", "yaml.syntax_error", OLDER, null, 1, 7]]);
    expect(all("json_schema", { schema: { properties: { b: { type: "integer" } } } }, doc)).toEqual([]);
  });
  test("the next document's own %TAG for the same handle is its own; %YAML 1.2 and no %YAML did so already", () => {
    const own = "%YAML 1.1\n%TAG !e! tag:a:\n---\na: !e!x 1\n...\n%TAG !e! tag:b:\n---\nb: !e!y 2\n";
    expect(syntax(own).map((f) => f[2])).toEqual([
      OLDER,
      "Unresolved tag: tag:a:x",
      "Unresolved tag: tag:b:y",
    ]);
    const qlj7 =
      "%TAG !prefix! tag:example.com,2011:\n--- !prefix!A\na: b\n--- !prefix!B\nc: d\n--- !prefix!C\ne: f\n";
    const later = (handle: string, line: number) => [...unresolved(handle, line).slice(0, 5), 5];
    expect(syntax(qlj7)).toEqual([
      ["warning", "yaml.syntax_error", "Unresolved tag: tag:example.com,2011:A", null, 2, 5],
      later("!prefix!B", 4),
      later("!prefix!C", 6),
    ]);
    const v12 = "%YAML 1.2\n%TAG !e! tag:example.com,2000:\n---\na: !e!foo 1\n...\n---\nb: !e!bar 2\n";
    expect(syntax(v12).slice(1)).toEqual([unresolved("!e!bar", 7)]);
  });
});

describe("characters YAML does not allow are an error at the character (YAML 1.2 §5.1, §5.2)", () => {
  const control = (hex: string, escaped: string) =>
    `the character U+${hex} is not allowed in YAML (YAML 1.2 §5.1): write it as the escape "${escaped}" in a double-quoted scalar`;
  const BOM = "a byte order mark (U+FEFF) is allowed only at the start of a document (YAML 1.2 §5.2)";
  test.each([
    ["a: b\u0001c\n", control("0001", "\\x01"), 1, 5],
    ['a: 1\nb: "x\u0000"\n', control("0000", "\\x00"), 2, 6],
    ["a: 1\n# \u001b[31m\n", control("001B", "\\x1B"), 2, 3],
    ["a: \u007f\n", control("007F", "\\x7F"), 1, 4],
    ["a: \u009b\n", control("009B", "\\x9B"), 1, 4],
    ["a: b\ufeffc\n", BOM, 1, 5],
    ["a: 1\n---\n\ufeffb: 2\n", BOM, 3, 1],
  ])("%p (was accepted as content)", (doc, message, line, column) => {
    expect(syntax(doc)).toEqual([["error", "yaml.syntax_error", message, null, line, column]]);
  });
  test("one finding, which says how many more there are; json_schema does not check the document", () => {
    expect(syntax("a: \u0001\nb: \u0002\u0003\n")).toEqual([
      [
        "error",
        "yaml.syntax_error",
        `${control("0001", "\\x01")}; 2 more such characters follow`,
        null,
        1,
        4,
      ],
    ]);
    expect(all("json_schema", { schema: {} }, "a: x\u0007\n")).toEqual([
      ["error", "yaml.syntax_error", control("0007", "\\x07"), null, 1, 5],
    ]);
  });
  test("allowed: tab, NEL, escapes, and a byte order mark where a document starts", () => {
    expect(syntax('a: "\t\u0085 \\x01 \\uFEFF"\nb: c\td\n')).toEqual([]);
    expect(syntax("\ufeffa: 1\n")).toEqual([]);
    expect(syntax("a: 1\n...\n\ufeff---\nb: 2\n")).toEqual([]);
    expect(syntax("a: 1\n...\n\ufeffb: 2\n")).toEqual([]);
    // As submitted: the decoder takes the first mark off, the second is the document's.
    expect(run("syntax", {}, new TextEncoder().encode("\ufeff\ufeffa: 1\n"), "YAML").findings).toEqual([]);
  });
});

describe("a finding under a key is placed where the key is, whatever the key's type", () => {
  // Keys are JSON property names as yaml's toJS gives them: null is "" (so the path is "/"),
  // true is "true", 0x10 is "16", 1.0 is "1". The pointer that finds a key again named a null key
  // "null", found nothing, and placed the finding at the document's start (1:1).
  const schema = { additionalProperties: { type: "string" } };
  test("a null key: the finding is at its value (was at 1:1)", () => {
    expect(all("json_schema", { schema }, "~: {bad: 1}\n")).toEqual([
      ["error", "json_schema.type", "must be string", "/", 1, 4],
    ]);
    expect(all("json_schema", { schema }, "a: x\nnull: 2\n")).toEqual([
      ["error", "json_schema.type", "must be string", "/", 2, 7],
    ]);
    const names = { propertyNames: { minLength: 1 } };
    expect(all("json_schema", { schema: names }, "a: x\nNULL: 2\n")).toEqual([
      ["error", "json_schema.minLength", "must not have fewer than 1 character", "/", 2, 1],
    ]);
  });
  test("boolean and number keys, as before", () => {
    expect(
      all("json_schema", { schema }, "true: 1\n1.0: 2\n0x10: 3\n").map((f) => [f[3], f[4], f[5]]),
    ).toEqual([
      ["/1", 2, 6],
      ["/16", 3, 7],
      ["/true", 1, 7],
    ]);
  });
});

describe("an integer key beyond 2^53 keeps its digits as its property name", () => {
  const names = { propertyNames: { maxLength: 3 } };
  const long = (path: string, line: number, column = 1) => [
    "error",
    "json_schema.maxLength",
    "must not have more than 3 characters",
    path,
    line,
    column,
  ];
  test("9007199254740993 is not renamed 9007199254740992", () => {
    expect(all("json_schema", { schema: names }, "9007199254740993: x\n")).toEqual([
      long("/9007199254740993", 1),
    ]);
  });
  test("two such keys are two properties, not one key collision", () => {
    const schema = { ...names, required: ["9007199254740993", "9007199254740992"] };
    expect(all("json_schema", { schema }, "9007199254740993: a\n9007199254740992: b\n")).toEqual([
      long("/9007199254740993", 1),
      long("/9007199254740992", 2),
    ]);
  });
  test("beyond a double and in hex: the digits, not 1e+23 or a rounded neighbour", () => {
    const doc = "99999999999999999999999: x\n0x20000000000001: y\n";
    expect(all("json_schema", { schema: names }, doc)).toEqual([
      long("/99999999999999999999999", 1),
      long("/9007199254740993", 2),
    ]);
    const expr = "data.exists(k, k == '99999999999999999999999') && data.exists(k, k == '9007199254740993')";
    expect(all("assertions", { rules: [{ id: "r", expr, message: "renamed" }] }, doc)).toEqual([]);
  });
  test("a hex key and a decimal key of the same integer are duplicates", () => {
    expect(syntax("0x20000000000001: a\n9007199254740993: b\n")).toEqual([
      ["error", "yaml.syntax_error", "duplicate key: Map keys must be unique", null, 2, 1],
    ]);
  });
  test("anchored, or an alias key to one: the digits too (was the rounded double)", () => {
    // At the key's own column, after its anchor.
    expect(all("json_schema", { schema: names }, "&a 9007199254740993: x\n")).toEqual([
      long("/9007199254740993", 1, 4),
    ]);
    const deep = { additionalProperties: names };
    expect(all("json_schema", { schema: deep }, "x: &a 9007199254740993\nm:\n  *a : 1\n")).toEqual([
      long("/m/9007199254740993", 3, 3),
    ]);
    expect(all("json_schema", { schema: deep }, "x: &a 0x20000000000001\nm: {*a : 1}\n")).toEqual([
      long("/m/9007199254740993", 2, 5),
    ]);
    // Anchored key and alias key in one mapping each; their neighbours are other properties.
    const schema = { ...names, properties: { m: names } };
    const doc = "&a 99999999999999999999999: x\n9007199254740992: y\nm:\n  *a : 1\n  9007199254740992: 2\n";
    expect(all("json_schema", { schema }, doc)).toEqual([
      long("/m/99999999999999999999999", 4, 3),
      long("/m/9007199254740992", 5, 3),
      long("/99999999999999999999999", 1, 4),
      long("/9007199254740992", 2),
    ]);
    const expr =
      "data.exists(k, k == '99999999999999999999999') && data.m.exists(k, k == '99999999999999999999999')";
    expect(all("assertions", { rules: [{ id: "r", expr, message: "renamed" }] }, doc)).toEqual([]);
  });
  test("an alias of such a key, as a value, stays the node's value: a double for json_schema, exact for CEL", () => {
    const schema = { properties: { v: { const: 9007199254740992 }, l: { items: { type: "integer" } } } };
    const doc = "&a 9007199254740993: x\nv: *a\nl: [*a]\n";
    expect(all("json_schema", { schema }, doc)).toEqual([]);
    const rules = [{ id: "r", expr: "data.v == 9007199254740993 && type(data.l[0]) == int", message: "m" }];
    expect(all("assertions", { rules }, doc)).toEqual([]);
  });
  test("values: doubles for json_schema as before; a !!float is a double for CEL (was an int)", () => {
    const schema = { properties: { a: { const: 9007199254740992 } } };
    expect(all("json_schema", { schema }, "a: 9007199254740993\n")).toEqual([]);
    const rules = [{ id: "r", expr: "type(data.a) == double", message: "not a double" }];
    expect(all("assertions", { rules }, "a: !!float 9007199254740993\n")).toEqual([]);
  });
});

describe("an unresolved alias is placed at the alias, with its path (was 1:1, no path)", () => {
  const unresolved = (name: string, path: string, line: number, column: number) => [
    "error",
    "yaml.syntax_error",
    `Unresolved alias (the anchor must be set before the alias): ${name}`,
    path,
    line,
    column,
  ];
  test("in every step that reads the value", () => {
    const doc = "a: 1\nb:\n  - x\n  - [1, *nope]\n";
    expect(syntax(doc)).toEqual([unresolved("nope", "/b/1/1", 4, 9)]);
    expect(all("json_schema", { schema: {} }, doc)).toEqual([unresolved("nope", "/b/1/1", 4, 9)]);
    const rules = [{ id: "r", expr: "true", message: "m" }];
    expect(all("assertions", { rules }, "a/b~c: *nope\n")).toEqual([unresolved("nope", "/a~1b~0c", 1, 8)]);
  });
  test("an anchor after its alias does not count; a later document's alias at its own line", () => {
    expect(syntax("b: *a\nc: &a 1\n")).toEqual([unresolved("a", "/b", 1, 4)]);
    expect(syntax("a: 1\n---\nb: *nope\n")).toEqual([unresolved("nope", "/b", 3, 4)]);
  });
  test("as a key, or under keys that are null or an alias: the path names the keys as the value does", () => {
    expect(syntax("x: 1\n*nope : 1\n")).toEqual([unresolved("nope", "", 2, 1)]);
    expect(syntax("a: &x k\n~:\n  *x : {q: *nope}\n")).toEqual([unresolved("nope", "//k/q", 3, 12)]);
  });
});

describe("an alias as a mapping key is its anchor's node: duplicates and collisions as for plain keys", () => {
  const DUPLICATE = ["error", "yaml.syntax_error", "duplicate key: Map keys must be unique", null];
  test("`&a k: 1` then `*a : 2` is a duplicate key (was accepted, the last value kept)", () => {
    expect(syntax("&a k: 1\n*a : 2\n")).toEqual([[...DUPLICATE, 2, 1]]);
    expect(all("json_schema", { schema: {} }, "&a k: 1\n*a : 2\n")).toEqual([[...DUPLICATE, 2, 1]]);
  });
  test("an anchor elsewhere: the alias then the plain key, or after plain duplicates, each once", () => {
    expect(syntax("x: &a k\nm:\n  *a : 1\n  k: 2\n")).toEqual([[...DUPLICATE, 4, 3]]);
    expect(syntax("x: &a k\nm:\n  k: 1\n  k: 2\n  *a : 3\n")).toEqual([
      [...DUPLICATE, 4, 3],
      [...DUPLICATE, 5, 3],
    ]);
    expect(syntax("? &a [1]\n: x\n? *a\n: y\n")).toEqual([[...DUPLICATE, 3, 3]]);
    // Different keys, the same or another anchor: no finding.
    expect(syntax("x: &a k\ny: &b j\nm:\n  *a : 1\n  *b : 2\n")).toEqual([]);
  });
  test("JSON property names: an alias to 1 collides with '1'; an alias to a sequence has none", () => {
    expect(all("json_schema", { schema: {} }, "x: &a 1\nm:\n  *a : 1\n  '1': 2\n")).toEqual([
      [
        "error",
        "yaml.key_collision",
        "the keys *a and '1' are different YAML keys but one JSON property name: the data was not checked",
        null,
        4,
        3,
      ],
    ]);
    expect(all("json_schema", { schema: {} }, "x: &a [1]\nm:\n  *a : 1\n")).toEqual([
      [
        "error",
        "yaml.key_not_scalar",
        "the key *a is a sequence, which has no JSON property name: the data was not checked",
        null,
        3,
        3,
      ],
    ]);
  });
  test("a finding under an alias key is placed there, named as its anchor's node", () => {
    const schema = { properties: { m: { additionalProperties: { type: "string" } } } };
    expect(all("json_schema", { schema }, "x: &a k\nm:\n  *a : 1\n")).toEqual([
      ["error", "json_schema.type", "must be string", "/m/k", 3, 8],
    ]);
  });
});

describe("directives where YAML 1.2 allows none are an error at the directive (test suite SF5V, 9MMA)", () => {
  const TWICE = "a document has one %YAML directive at most (YAML 1.2 §6.8.1)";
  const ALONE = "a directive must be followed by a document that starts with --- (YAML 1.2 §9.2)";
  test("a second %YAML for one document (was read without a finding)", () => {
    expect(syntax("%YAML 1.2\n%YAML 1.2\n---\na: 1\n")).toEqual([
      ["error", "yaml.syntax_error", TWICE, null, 2, 1],
    ]);
  });
  test("a directive with no document after it (was read as an empty document)", () => {
    expect(syntax("%YAML 1.2\n")).toEqual([["error", "yaml.syntax_error", ALONE, null, 1, 1]]);
    expect(syntax("a: 1\n...\n%TAG !e! tag:e.com,2000:\n")).toEqual([
      ["error", "yaml.syntax_error", ALONE, null, 3, 1],
    ]);
    expect(all("json_schema", { schema: true }, "%YAML 1.2\n")).toEqual([
      ["error", "yaml.syntax_error", ALONE, null, 1, 1],
    ]);
  });
  test("one %YAML per document, and a %TAG beside it, say nothing", () => {
    expect(syntax("%YAML 1.2\n%TAG !e! tag:e.com,2000:\n---\na: 1\n...\n%YAML 1.2\n---\nb: 2\n")).toEqual([]);
  });
});

describe("a `...` with no document before it makes no document (test suite M7A3)", () => {
  /** The line of each document: `false` fails every document once, at its root. */
  const documents = (doc: string) =>
    run("json_schema", { schema: false }, doc, "YAML").findings.map((f) => [f.code, f.line]);
  test("Spec Example 9.3: two documents, not three (yaml made a null one of the second `...`)", () => {
    const doc = "Bare\ndocument\n...\n# No document\n...\n|\n%!PS-Adobe-2.0 # Not the first line\n";
    expect(documents(doc)).toEqual([
      ["json_schema.false_schema", 1],
      ["json_schema.false_schema", 6],
    ]);
    expect(syntax(doc)).toEqual([]);
  });
  test("an explicit empty document (`---` alone) is still a null document", () => {
    expect(documents("a\n...\n---\n...\n")).toEqual([
      ["json_schema.false_schema", 1],
      ["json_schema.false_schema", 3],
    ]);
  });
});
