// The save-time check asks fontoxpath whether each function an expression calls exists, and keeps
// the answers: the names come from the author (any prefix bound by sch:ns, any local name, any
// arity), so the answers kept must be bounded, or every schema saved grows the thread that checks.
import { expect, test } from "bun:test";
import {
  analyseExpression,
  FUNCTION_LOOKUPS_KEPT,
  functionLookupsKept,
} from "../../../src/validators/schematron/xpath.ts";

test("the answers kept about which functions exist stay bounded however many distinct names are checked", () => {
  const ns = { f: "urn:example:functions" };
  for (let i = 0; i < FUNCTION_LOOKUPS_KEPT + 500; i++) {
    const facts = analyseExpression(`f:unknown${i}(.)`, ns);
    expect(facts.problems).toEqual([`calls f:unknown${i}#1, which is not an available function`]);
    expect(functionLookupsKept()).toBeLessThanOrEqual(FUNCTION_LOOKUPS_KEPT);
  }
  // A name that exists is still answered as existing after the answers were dropped.
  expect(analyseExpression("string-length(.)", ns).problems).toEqual([]);
});
