// A user's schema compiled into a check that runs the same on every thread. typebox turns a schema
// into JavaScript where each enum value, property, required name and allOf/anyOf/oneOf member is
// one level of parentheses deeper than the last: `(((a && b) && c) && …)`. JavaScriptCore's parser
// recurses per level, so width became depth: in Bun 1.4.5 an enum of ~4,000 values overflowed a
// worker's stack (the first Check parses the function body; Bun gives workers a smaller stack and
// no option to set it), ~5,000 the main thread's — so a schema passed the save-time compile on
// one thread and failed every run on another. Code nested deeper than MAX_CODE_DEPTH is not
// compiled: typebox's interpreter checks the same schema in loops, whatever its width.
import Schema from "typebox/schema";
import { withEnumSets } from "./enum-sets.ts";
import { withUserPatterns } from "./user-patterns.ts";

/** Nesting of the generated code above which the interpreter checks: a quarter of a worker's limit. */
export const MAX_CODE_DEPTH = 1000;

export interface SchemaCheck {
  Check(value: unknown): boolean;
  /** True when the check is generated code, false when typebox's interpreter runs it. */
  readonly compiled: boolean;
}

/** The check of `schema` (with `context`, URI → schema). Large enums are Set lookups (enum-sets.ts). */
export function compileCheck(context: Record<string, unknown>, schema: unknown): SchemaCheck {
  const s = withEnumSets(schema);
  const ctx = Object.fromEntries(Object.entries(context).map(([uri, r]) => [uri, withEnumSets(r)]));
  return withUserPatterns(() => {
    const build = Schema.Build(ctx as never, s as never);
    const functions = build.Functions();
    // Evaluate() compiles these very strings (the array is the build's own).
    for (let i = 0; i < functions.length; i++) functions[i] = unevaluatedPropertiesOnObjects(functions[i]!);
    if (codeDepth([...functions, build.Entry()]) <= MAX_CODE_DEPTH) {
      const evaluated = build.Evaluate();
      return { Check: (value: unknown) => evaluated.Check(value), compiled: true };
    }
    // The interpreter builds pattern RegExps as it goes: they too must be the linear-time ones.
    return {
      Check: (value: unknown) => withUserPatterns(() => Schema.Check(ctx as never, s as never, value)),
      compiled: false,
    };
  });
}

/**
 * typebox 1.4 applies `unevaluatedProperties` to arrays as well as objects (its guard is
 * `typeof value === "object" && value !== null`), taking an array's indexes for property names:
 * `{"unevaluatedProperties": false}` refused `["x"]`, which JSON Schema says it ignores (2020-12
 * Core §11.3: it applies to objects). The keyword's generated code is the only code so guarded;
 * the guard is given the array test every other object keyword has. Its interpreter (wide
 * schemas, and the explanations: errors.ts drops such errors) keeps the fault.
 */
const UNEVALUATED_GUARD =
  /!\(typeof ([^\n]+?) === "object" && \1 !== null\) \|\| \(\(context\) => \{ const keys = context\.GetKeys\(\);/g;

export function unevaluatedPropertiesOnObjects(code: string): string {
  return code.replace(
    UNEVALUATED_GUARD,
    (_, v: string) =>
      `!(typeof ${v} === "object" && ${v} !== null && !(Array.isArray(${v}))) || ((context) => { const keys = context.GetKeys();`,
  );
}

/** Deepest nesting of brackets in the code, string literals skipped; stops once over the bound. */
export function codeDepth(code: string[]): number {
  let max = 0;
  for (const text of code) {
    let depth = 0;
    let quote = "";
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quote) {
        if (c === "\\") i++;
        else if (c === quote) quote = "";
      } else if (c === '"' || c === "'" || c === "`") quote = c;
      else if (c === "(" || c === "[" || c === "{") {
        if (++depth > max) max = depth;
        if (max > MAX_CODE_DEPTH) return max;
      } else if (c === ")" || c === "]" || c === "}") depth--;
    }
  }
  return max;
}
