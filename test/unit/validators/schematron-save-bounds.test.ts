// Save-time checks of a schematron step that must stay cheap and say what is wrong: sch:extends
// expanded without copying a diamond once per path (a 1.7 KB schema of rules extending several
// abstract rules that extend several others took 6.5 s and 0.7 GB at save), and the literal
// patterns of matches(), tokenize() and replace() compiled at save by the engine that runs them,
// so a pattern that can never compile is refused instead of failing every run.
import { beforeAll, describe, expect, test } from "bun:test";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { MAX_REGEX_COST } from "../../../src/validators/limits.ts";
import { MAX_EXTENDS_EXPANSION } from "../../../src/validators/schematron/schema.ts";
import { run } from "./helpers.ts";

beforeAll(() => loadLibxml());

const sch = (body: string) =>
  `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">\n${body}\n</sch:schema>`;

/**
 * `layers` layers of `width` abstract rules, each extending every rule of the layer below (one
 * assert each in the bottom layer), and one rule on line 2 extending every rule of the top layer:
 * copied path by path it holds width^layers asserts.
 */
function diamond(width: number, layers: number): string {
  const rules: string[] = [];
  for (let l = 0; l < layers; l++)
    for (let w = 0; w < width; w++) {
      const body =
        l === 0
          ? `<sch:assert id="A${w}" test="@a${w}">a${w}</sch:assert>`
          : Array.from({ length: width }, (_, v) => `<sch:extends rule="r${l - 1}-${v}"/>`).join("");
      rules.push(`<sch:rule abstract="true" id="r${l}-${w}">${body}</sch:rule>`);
    }
  const top = Array.from({ length: width }, (_, v) => `<sch:extends rule="r${layers - 1}-${v}"/>`).join("");
  return sch(`<sch:pattern>\n<sch:rule context="x">${top}</sch:rule>\n${rules.join("\n")}\n</sch:pattern>`);
}

describe("schematron save: sch:extends", () => {
  test("a diamond of extends past the bound is refused at save, naming the rule that extends", () => {
    // 4^8 = 65536 asserts once expanded: far past the bound, from a schema of a few KB.
    expect(4 ** 7).toBeGreaterThan(MAX_EXTENDS_EXPANSION);
    expect(checkStepConfig("schematron", { schema: diamond(4, 8) })).toEqual([
      {
        field: "schema",
        code: "invalid_schema",
        message: `line 3: sch:extends rule="r7-0" would expand the rules of the schema past ${MAX_EXTENDS_EXPANSION} lets, checks and extends: Assay copies an abstract rule once for each sch:extends that reaches it`,
      },
    ]);
  });

  test("the same with 12 layers (4^12 copies) is refused just the same", () => {
    expect(checkStepConfig("schematron", { schema: diamond(4, 12) })).toEqual([
      expect.objectContaining({ field: "schema", code: "invalid_schema" }),
    ]);
  });

  test("a diamond within the bound still runs each copied assert, as before", () => {
    // 2^3 = 8 asserts: 4 copies of A0 and 4 of A1.
    const r = run("schematron", { schema: diamond(2, 3) }, "<x/>", "XML");
    expect(r.findings.map((f) => f.code)).toEqual(Array(4).fill(["schematron.A0", "schematron.A1"]).flat());
  });

  test("a cycle of extends is refused at save", () => {
    const schema = sch(`<sch:pattern>
<sch:rule context="x"><sch:extends rule="a"/></sch:rule>
<sch:rule abstract="true" id="a"><sch:assert test="true()">a</sch:assert><sch:extends rule="b"/></sch:rule>
<sch:rule abstract="true" id="b"><sch:extends rule="a"/></sch:rule>
</sch:pattern>`);
    expect(checkStepConfig("schematron", { schema })).toEqual([
      { field: "schema", code: "invalid_schema", message: 'line 5: extends rule="a" again (a cycle)' },
    ]);
  });

  test("an abstract rule extending itself is refused at save", () => {
    const schema = sch(`<sch:pattern>
<sch:rule context="x"><sch:extends rule="a"/></sch:rule>
<sch:rule abstract="true" id="a"><sch:extends rule="a"/></sch:rule>
</sch:pattern>`);
    expect(checkStepConfig("schematron", { schema })).toEqual([
      { field: "schema", code: "invalid_schema", message: 'line 4: extends rule="a" again (a cycle)' },
    ]);
  });
});

describe("schematron save: literal regex patterns", () => {
  const schema = (test: string) =>
    sch(`<sch:pattern><sch:rule context="x">
<sch:assert id="R" test="${test}">r</sch:assert>
</sch:rule></sch:pattern>`);
  const refused = (test: string, why: string) =>
    expect(checkStepConfig("schematron", { schema: schema(test) })).toEqual([
      {
        field: "schema",
        code: "invalid_expression",
        message: `line 3: the assert test "${test}" ${why}`,
      },
    ]);

  test("matches() with a pattern xspattern cannot parse is refused, with fontoxpath's reason", () => {
    refused(
      "matches(., '[a-')",
      `calls matches() with a pattern that can never run (FORX0002: Error parsing pattern "[a-" at offset 3: expected one of "]", "-[", "-", "-", "\\", "any character" but found "")`,
    );
    refused(
      "fn:matches(., '(?i)x')",
      `calls fn:matches() with a pattern that can never run (FORX0002: Error parsing pattern "(?i)x" at offset 1: expected ")" but found "?")`,
    );
  });

  test("tokenize() and replace() with a pattern or flags RE2 cannot run are refused, with the run's reason", () => {
    refused(
      "count(tokenize(., '[a-')) = 1",
      'calls tokenize() with a pattern that can never run (FORX0002: the pattern "[a-" is not a valid regular expression: Invalid regular expression: missing terminating ] for character class)',
    );
    refused(
      "count(tokenize(., 'x?')) = 1",
      'calls tokenize() with a pattern that can never run (FORX0003: the pattern "x?" matches the empty string)',
    );
    refused(
      "replace(., 'a', 'b', 'q') = .",
      'calls replace() with a pattern that can never run (FORX0001: flags "q": Assay supports s, m and i)',
    );
  });

  test("replace() with a literal replacement XPath refuses is refused, whatever its pattern", () => {
    refused(
      "replace(., 'a', '$') = .",
      'calls replace() with a replacement that can never be used (FORX0004: "$" in a replacement names a group by its number)',
    );
    refused(
      "replace(., concat('a', ''), 'x$y') = .",
      'calls replace() with a replacement that can never be used (FORX0004: "$" in a replacement names a group by its number)',
    );
    refused(
      "fn:replace(., 'a', 'c:\\temp', 'i') = .",
      'calls fn:replace() with a replacement that can never be used (FORX0004: "\\" in a replacement escapes only "\\" or "$")',
    );
    for (const ok of ["'$1\\$\\\\'", "'$0$12'", "''", "concat('$', '')"])
      expect(checkStepConfig("schematron", { schema: schema(`replace(., '(a)', ${ok}) = .`) })).toEqual([]);
  });

  test("a test with several bad literals names each; a let's value is checked too", () => {
    const s = sch(`<sch:pattern><sch:rule context="x">
<sch:let name="v" value="replace(., '(a)\\1', '')"/>
<sch:assert test="matches(., '[') or $v">r</sch:assert>
</sch:rule></sch:pattern>`);
    expect(checkStepConfig("schematron", { schema: s }).map((i) => i.message)).toEqual([
      expect.stringMatching(
        /^line 3: the let "v" "replace\(\., '\(a\)\\1', ''\)" calls replace\(\) with a pattern that can never run \(FORX0002: /,
      ),
      expect.stringMatching(
        /^line 4: the assert test "matches\(\., '\['\) or \$v" calls matches\(\) with a pattern that can never run \(FORX0002: /,
      ),
    ]);
  });

  test("valid literals, XSD-only syntax in matches() and computed patterns are accepted", () => {
    for (const test of [
      "matches(., '^[0-9]{4}$') and matches(., '\\p{Lu}\\i[a-z-[aeiou]]')",
      "count(tokenize(., '\\s+', 'i')) = 1 and replace(., '(\\d+)', '$1') = .",
      "matches(., concat('[', 'a-')) and count(tokenize(., string(@p))) = 1",
      "count(tokenize(., '[a-', string(@f))) = 1",
    ])
      expect(checkStepConfig("schematron", { schema: schema(test) })).toEqual([]);
  });

  test("a computed pattern that cannot compile stays a run-time evaluation error", () => {
    const r = run("schematron", { schema: schema("matches(., concat('[', 'a-'))") }, "<x/>", "XML");
    expect(r.findings.map((f) => [f.code, f.message.includes("FORX0002")])).toEqual([
      ["schematron.evaluation_error", true],
    ]);
  });

  test("a matches() pattern past the cost bound is refused at save, as every run refuses it", () => {
    // ((a{100}){100}){100}: a million automaton positions (it was left to the run, which compiled
    // it: 0.8 s and 212 MB; a billion took the server to 6.4 GB).
    refused(
      "matches(., '((a{100}){100}){100}')",
      `calls matches() with a pattern that can never run (FORX0002: the pattern "((a{100}){100}){100}" would expand to more than ${MAX_REGEX_COST} positions (its counted repetitions, multiplied where nested): it is not compiled)`,
    );
    refused(
      "count(tokenize(., 'a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}')) = 1",
      `calls tokenize() with a pattern that can never run (FORX0002: the pattern "a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{1000}a{10…" would expand to more than ${MAX_REGEX_COST} positions (its counted repetitions, multiplied where nested): it is not compiled)`,
    );
  });

  test("a matches() literal whose counted repetitions follow each other is compiled at save", () => {
    // Length times every count (the bound before) put it at 38 × 64 × 255 × 63 and left it to the
    // run; its positions are 384, so the save compiles it and refuses what can never run.
    refused(
      "matches(., '[a-z]{1,64}@[a-z.]{1,255}\\.[a-z]{2,63}(')",
      `calls matches() with a pattern that can never run (FORX0002: Error parsing pattern "[a-z]{1,64}@[a-z.]{1,255}\\.[a-z]{2,63}(" at offset 39: expected ")" but found "")`,
    );
    expect(
      checkStepConfig("schematron", {
        schema: schema("matches(., '[a-z]{1,64}@[a-z.]{1,255}\\.[a-z]{2,63}')"),
      }),
    ).toEqual([]);
  });

  test("a computed pattern past the cost bound is an evaluation error when the step runs, not compiled", () => {
    const tests = [
      "matches(., concat('((a{1000}){1000})', '{1000}'))",
      "matches(., concat('(a{200})', '{200}'))",
      "count(tokenize(., string-join(for $i in 1 to 30 return 'a{1000}', ''))) = 1",
      "replace(., string-join(for $i in 1 to 30 return 'a{1000}', ''), '') = ''",
    ];
    const s = sch(`<sch:pattern><sch:rule context="x">
${tests.map((t) => `<sch:assert test="${t}">r</sch:assert>`).join("\n")}
</sch:rule></sch:pattern>`);
    const expand = (p: string) =>
      `FORX0002: the pattern ${JSON.stringify(p.length > 60 ? `${p.slice(0, 60)}…` : p)} would expand to more than ${MAX_REGEX_COST} positions (its counted repetitions, multiplied where nested): it is not compiled`;
    const a30 = "a{1000}".repeat(30);
    expect(run("schematron", { schema: s }, "<x>a</x>", "XML").findings).toEqual(
      ["((a{1000}){1000}){1000}", "(a{200}){200}", a30, a30].map((p, i) => ({
        severity: "error",
        code: "schematron.evaluation_error",
        message: `the assert could not be evaluated: ${expand(p)}`,
        path: "/x",
        line: 1,
        column: 1,
        rule: tests[i],
      })),
    );
  });
});
