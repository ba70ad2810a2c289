// comparesOnlyNumbers (src/validators/schematron/codepoint-order.ts): the text-only reading that
// spares the parse of an expression whose every ordering operator has a number literal as a whole
// operand. A wrong "true" would leave a string comparison by UTF-16 code unit, so each way an
// operand can go on past the literal is a "false" here.
import { expect, test } from "bun:test";
import { comparesOnlyNumbers } from "../../../src/validators/schematron/codepoint-order.ts";

test("a number literal as a whole operand: true", () => {
  for (const expr of [
    "count(a) <= 1",
    "(count(a) &lt;= 1)".replace("&lt;", "<"),
    "1 < count(a)",
    "x >= 0 and y > 1.5 or z lt 1e3",
    "(a > 0)",
    "f(a > 0, b < .5)",
    "if (a) then b > 0 else c < 1",
    "every $x in a satisfies $x > 0",
    "'a < b' = 'x'", // inside a string literal
    "(: a < b :) 1",
    "a => f() = 1", // an arrow, not an operator
    "a << b or c >> d", // node order
    "a = 'b'",
  ])
    expect([expr, comparesOnlyNumbers(expr)]).toEqual([expr, true]);
});

test("an operand that goes on past the literal, or none that is one: false", () => {
  for (const expr of [
    "a < b",
    "@a gt 'x'",
    "a < 0 || 'x'", // the operand is the string '0x'
    "'x' || 0 > a",
    "a < 1 to 3",
    "a < 1 + b",
    "a < 1 cast as xs:string",
    "a < 1 ! string()",
    "a < 1[1]",
    "a < -1 || 'x'",
    "b - 1 < c",
    "max(a) = 1",
    "min((1, 2)) = 1",
    "a < 'unterminated",
    "a lt b",
  ])
    expect([expr, comparesOnlyNumbers(expr)]).toEqual([expr, false]);
});
