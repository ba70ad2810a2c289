// The cel-spec conformance tests (google/cel-spec, as packaged on npm by Buf: @bufbuild/cel-spec)
// through the `assertions` validator's CEL: the save-time check an author's rule gets, then the
// evaluation a run does, with its budget. A test passes when the value is the expected one (same
// type, same value), or when an error is expected and the expression is refused at save or fails
// at evaluation. Tests marked disable_check skip the type check, as the suite asks.
//
// Scope: the ten core files below, minus the tests no rule could express: those that bind
// variables (a rule reads only `data` and `row`) or build protobuf messages of the suite's own
// types (a `container`: submissions are never protobuf messages). The counts are exact and every
// known miss is listed by name: the test fails when a count drops or a listed miss passes.
// docs/conformance.md carries the same numbers.
import { describe, expect, test } from "bun:test";
import type { Value } from "@bufbuild/cel-spec/cel/expr/value_pb.js";
import { getConformanceSuite, type IncrementalTest } from "@bufbuild/cel-spec/testdata/tests.js";
import { compileExpression, evaluate, ExpressionError } from "../../src/validators/assertions/cel.ts";
import { type Canon, canonical, expected, same } from "./cel-values.ts";

const FILES = [
  "basic",
  "comparisons",
  "logic",
  "string",
  "lists",
  "fields",
  "macros",
  "conversions",
  "integer_math",
  "fp_math",
];
/** Beyond the ten: the extensions Assay provides, timestamps, and the parser's own file. */
const MORE_FILES = [
  "timestamps",
  "string_ext",
  "math_ext",
  "bindings_ext",
  "encoders_ext",
  "parse",
  "plumbing",
  // Protobuf's well-known types (google.protobuf.Int32Value{…}, Struct, Value, ListValue, Any),
  // which a rule can write; the file's tests of the suite's own messages are out of scope.
  "dynamic",
];

/** Exact counts per file: [passed, in scope]. */
const EXPECTED: Record<string, [number, number]> = {
  basic: [39, 39],
  comparisons: [352, 352],
  conversions: [109, 109],
  fields: [48, 48],
  fp_math: [30, 30],
  integer_math: [64, 64],
  lists: [39, 39],
  logic: [30, 30],
  macros: [44, 44],
  string: [51, 51],
};

/** Known misses by "file/section/name", with the reason. */
const KNOWN_MISSES: Record<string, string> = {};

const EXPECTED_MORE: Record<string, [number, number]> = {
  bindings_ext: [5, 5],
  dynamic: [53, 53],
  encoders_ext: [4, 4],
  math_ext: [199, 199],
  parse: [192, 192],
  plumbing: [4, 4],
  string_ext: [199, 199],
  timestamps: [75, 75],
};
const KNOWN_MORE_MISSES: Record<string, string> = {};

type Verdict = { pass: true } | { pass: false; why: string };

function run(t: IncrementalTest): Verdict {
  const o = t.original;
  const wantError = o.resultMatcher.case === "evalError";
  let compiled: ReturnType<typeof compileExpression>;
  try {
    compiled = compileExpression(o.expr, { bool: false, unchecked: o.disableCheck });
  } catch (e) {
    if (!(e instanceof ExpressionError)) throw e;
    return wantError ? { pass: true } : { pass: false, why: `refused at save: ${e.message}` };
  }
  const outcome = evaluate(compiled, {});
  if ("value" in outcome) {
    if (wantError)
      return { pass: false, why: `expected an error, got ${JSON.stringify(canonical(outcome.value))}` };
    // A test without a result expects true (cel-spec simple.proto).
    const want: Canon =
      o.resultMatcher.case === "value" ? expected(o.resultMatcher.value as Value) : ["bool", true];
    const got = canonical(outcome.value);
    return same(got, want)
      ? { pass: true }
      : { pass: false, why: `got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}` };
  }
  if (wantError) return { pass: true };
  return { pass: false, why: "error" in outcome ? `error: ${outcome.error}` : `budget: ${outcome.budget}` };
}

function inScope(t: IncrementalTest): boolean {
  return Object.keys(t.original.bindings).length === 0 && t.original.container === "";
}

/** For the other files also: no message of the suite's own types, no type-check-only test. */
function inMoreScope(t: IncrementalTest): boolean {
  return inScope(t) && !/TestAllTypes|cel\.expr\.conformance/.test(t.original.expr) && !t.original.checkOnly;
}

type Tally = Map<string, { passed: number; total: number; misses: Record<string, string> }>;

function tally(files: string[], scope: (t: IncrementalTest) => boolean): Tally {
  const results: Tally = new Map();
  for (const file of getConformanceSuite().suites.filter((f) => files.includes(f.name))) {
    const r = { passed: 0, total: 0, misses: {} as Record<string, string> };
    for (const section of file.suites)
      for (const t of section.tests) {
        if (!scope(t)) continue;
        r.total++;
        const v = run(t);
        if (v.pass) r.passed++;
        else r.misses[`${file.name}/${section.name}/${t.original.name}`] = v.why;
      }
    results.set(file.name, r);
  }
  return results;
}

const counts = (t: Tally) => Object.fromEntries([...t].map(([name, r]) => [name, [r.passed, r.total]]));
const misses = (t: Tally) => Object.assign({}, ...[...t.values()].map((r) => r.misses));

describe("cel-spec conformance: the ten core files", () => {
  const results = tally(FILES, inScope);
  test("counts per file", () => expect(counts(results)).toEqual(EXPECTED));
  test("every miss is known, and every known miss still misses", () =>
    expect(Object.keys(misses(results)).sort()).toEqual(Object.keys(KNOWN_MISSES).sort()));
});

describe("cel-spec conformance: extensions, timestamps, parsing", () => {
  const results = tally(MORE_FILES, inMoreScope);
  test("counts per file", () => expect(counts(results)).toEqual(EXPECTED_MORE));
  test("every miss is known, and every known miss still misses", () =>
    expect(Object.keys(misses(results)).sort()).toEqual(Object.keys(KNOWN_MORE_MISSES).sort()));
});
