// Every function of the CEL environment, called with assorted values of every kind: an error is
// always one of Assay's sentences (errors.ts), never the fallback that says nothing, and a bad
// expression is always an ExpressionError (a 400 at save), never another exception (a 500).
import { expect, test } from "bun:test";
import { compileExpression, ExpressionError, evaluate } from "../../../src/validators/assertions/cel.ts";
import { env } from "../../../src/validators/assertions/env.ts";

const VALUES = [
  "0",
  "-1",
  "1u",
  "2.5",
  "1e308",
  "'x'",
  "''",
  "'héllo😀'",
  "b'\\xff'",
  "true",
  "null",
  "[]",
  "[1, 'a']",
  "[[1], [2]]",
  "{}",
  "{'a': 1}",
  "timestamp('2026-01-01T00:00:00Z')",
  "duration('1s')",
  "data",
  "data.a",
  "9223372036854775807",
  "18446744073709551615u",
  "int",
  "['b', 'a']",
];

test("no call of any function, with any kind of value, yields an engine's message or a 500", () => {
  let seed = 7;
  const pick = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return VALUES[seed % VALUES.length];
  };
  const silent: string[] = [];
  const crashes: string[] = [];
  let calls = 0;
  for (const f of env.funcs) {
    if (f.name.startsWith("@") || f.name === "_[_]") continue;
    for (let k = 0; k < 20; k++) {
      const op = /^[_!-](.*?)_$/.exec(f.name);
      const args = f.arguments.map(pick);
      const expr =
        f.name === "@in" || (op && f.arguments.length === 2)
          ? `${args[0]} ${f.name === "@in" ? "in" : op?.[1]} ${args[1]}`
          : op
            ? `${f.name[0]}(${args[0]})`
            : f.target
              ? `(${pick()}).${f.name}(${args.join(", ")})`
              : `${f.name}(${args.join(", ")})`;
      calls++;
      try {
        const out = evaluate(compileExpression(expr, { bool: false }), { data: new Map([["a", 1n]]) });
        if ("error" in out && out.error === "the expression could not be evaluated on this data")
          silent.push(expr);
      } catch (e) {
        if (!(e instanceof ExpressionError)) crashes.push(`${expr}: ${(e as Error).message}`);
      }
    }
  }
  expect(calls).toBeGreaterThan(3000);
  expect({ silent, crashes }).toEqual({ silent: [], crashes: [] });
});

test("a condition that is not a bool says so: the conditional and the macros built on it", () => {
  const data = {
    data: new Map<string, unknown>([
      ["a", 1n],
      ["l", [1n, 2n]],
      ["s", "x"],
    ]),
  };
  const said = (expr: string) => {
    const out = evaluate(compileExpression(expr, { bool: false }), data as never);
    return "error" in out ? out.error : out;
  };
  expect(said("data.a ? true : false")).toBe("expected a bool, got int");
  expect(said("data.s ? 1 : 2")).toBe("expected a bool, got string");
  expect(said("data.l.filter(x, x).size()")).toBe("expected a bool, got int");
  expect(said("data.l.exists_one(x, x)")).toBe("expected a bool, got int");
  expect(said("data.l.map(x, x, x).size()")).toBe("expected a bool, got int");
});
