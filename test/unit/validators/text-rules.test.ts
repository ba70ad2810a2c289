import { describe, expect, test } from "bun:test";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { brief, run } from "./helpers.ts";

const rules = (config: Record<string, unknown>, content: string | Uint8Array) =>
  run("text_rules", config, content, "TEXT");

describe("text_rules: limits", () => {
  test("max_bytes points at the first byte past the limit", () => {
    expect(brief(rules({ max_bytes: 6 }, "abc\ndefg"))).toEqual([
      { code: "text.max_bytes", line: 2, column: 3 },
    ]);
    expect(rules({ max_bytes: 8 }, "abc\ndefg").findings).toEqual([]);
    // A limit inside a multi-byte character names that character (its column, not one past it).
    expect(brief(rules({ max_bytes: 3 }, "abéc"))).toEqual([{ code: "text.max_bytes", line: 1, column: 3 }]);
  });
  test("max_lines: a final line break does not count as a line", () => {
    expect(rules({ max_lines: 2 }, "a\nb\n").findings).toEqual([]);
    expect(brief(rules({ max_lines: 2 }, "a\r\nb\r\nc"))).toEqual([
      { code: "text.max_lines", line: 3, column: 1 },
    ]);
  });
  test("max_line_length counts characters and points at the first one over", () => {
    expect(brief(rules({ max_line_length: 3 }, "abc\nabcd\néé🙂é\n"))).toEqual([
      { code: "text.line_too_long", line: 2, column: 4 },
      { code: "text.line_too_long", line: 3, column: 5 },
    ]);
  });
});

describe("text_rules: encoding", () => {
  const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x61]);
  test("utf-8 accepts a BOM, utf-8-no-bom refuses it, utf-8-bom requires it", () => {
    expect(rules({ encoding: "utf-8" }, bom).findings).toEqual([]);
    expect(brief(rules({ encoding: "utf-8-no-bom" }, bom))).toEqual([
      { code: "text.encoding", line: 1, column: 1 },
    ]);
    expect(brief(rules({ encoding: "utf-8-bom" }, "a"))).toEqual([
      { code: "text.encoding", line: 1, column: 1 },
    ]);
    expect(rules({ encoding: "utf-8-bom" }, bom).findings).toEqual([]);
  });
  test("invalid UTF-8 and non-ASCII bytes are located", () => {
    const bad = new Uint8Array([0x61, 0x0a, 0x62, 0xe2, 0x82]);
    expect(brief(rules({ encoding: "utf-8" }, bad))).toEqual([{ code: "text.encoding", line: 2, column: 2 }]);
    expect(brief(rules({ encoding: "ascii" }, "ok\nnaïve"))).toEqual([
      { code: "text.encoding", line: 2, column: 3 },
    ]);
  });
});

describe("text_rules: patterns", () => {
  test("not_match: every match, with line and column", () => {
    const r = rules(
      { patterns: [{ regex: "TODO", must: "not_match", message: "no TODOs", severity: "warning" }] },
      "a TODO\nb\n  TODO",
    );
    expect(brief(r)).toEqual([
      { code: "text.pattern_forbidden", line: 1, column: 3 },
      { code: "text.pattern_forbidden", line: 3, column: 3 },
    ]);
    expect(r.findings[0]).toMatchObject({ severity: "warning", message: "no TODOs", rule: "TODO" });
  });
  test("match: missing pattern is one finding", () => {
    const p = [{ regex: "^Copyright", flags: "m", must: "match", message: "needs a copyright line" }];
    expect(brief(rules({ patterns: p }, "x\ny"))).toEqual([
      { code: "text.pattern_missing", line: null, column: null },
    ]);
    expect(rules({ patterns: p }, "x\nCopyright 2024").findings).toEqual([]);
  });
  test("\\b under i: ſ is a word character, as ECMA says (was a boundary on each side of it)", () => {
    const p = [{ regex: "\\bs\\b", flags: "i", must: "not_match", message: "a lone s" }];
    expect(brief(rules({ patterns: p }, "a\u017fb\n-\u017f-\n"))).toEqual([
      { code: "text.pattern_forbidden", line: 2, column: 2 },
    ]);
  });
  test("empty matches do not loop forever", () => {
    expect(
      rules({ patterns: [{ regex: "x*", must: "not_match", message: "m" }] }, "ab").findings.length,
    ).toBe(3);
  });
  test("truncation", () => {
    const r = rules(
      { max_findings: 2, patterns: [{ regex: "a", must: "not_match", message: "m" }] },
      "aaaaa",
    );
    expect(r.findings).toHaveLength(2);
    expect(r.truncated).toBe(true);
  });
});

describe("text_rules: save-time checks", () => {
  const issues = (config: Record<string, unknown>) => checkStepConfig("text_rules", config);
  test("invalid regexes, and what cannot run in linear time, are refused", () => {
    expect(issues({ patterns: [{ regex: "(", must: "match", message: "m" }] })[0]).toMatchObject({
      field: "patterns[0].regex",
      code: "invalid_regex",
    });
    for (const regex of ["(a)\\1", "(?<q>')x\\k<q>", "a(?=b)", "(?!x)y", "a{1001}"]) {
      expect(issues({ patterns: [{ regex, must: "match", message: "m" }] })[0]?.code).toBe(
        "unsupported_regex",
      );
    }
    // Nested repeats are fine: the engine (RE2) is linear whatever the pattern's shape.
    for (const regex of [
      "(a+)+$",
      "(x+x+)+y",
      "(\\w+\\s?)+$",
      "^(a|a)*b|^a*c$",
      "^(?=.*\\d)(?!.*\\s).{8,}$",
    ]) {
      expect(issues({ patterns: [{ regex, must: "match", message: "m" }] })).toEqual([]);
    }
  });
  test("shape", () => {
    expect(issues({ encoding: "latin1" })[0].field).toBe("encoding");
    expect(issues({ max_lines: -1 })[0].field).toBe("max_lines");
    expect(issues({ patterns: [{ regex: "a", must: "maybe", message: "m" }] })[0].field).toBe(
      "patterns[0].must",
    );
    expect(issues({ patterns: [{ regex: "a", flags: "gg", must: "match", message: "m" }] })[0].field).toBe(
      "patterns[0].flags",
    );
  });
});
