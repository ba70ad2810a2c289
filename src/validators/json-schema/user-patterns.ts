// typebox runs `pattern`, `patternProperties` and the key test of `additionalProperties` with
// `new RegExp(p, "u")` (typebox/build/schema/engine/_regexp.mjs), that is with JavaScript's
// backtracking engine, which gives up on hard inputs and then reports "no match" (issue #19). It
// offers no hook for the engine, so while typebox builds a validator or collects errors we hand it
// a RegExp whose `new RegExp(p, "u")` gives back the pattern compiled by our linear-time engine
// (shared/user-regex.ts). The swap lasts only for those synchronous calls on this thread; any
// other construction (another flag set, a pattern the engine refuses, as typebox's own `regex`
// format check makes from the data) is JavaScript's RegExp as usual. The compiled check keeps the
// objects it was built with, so Check() runs on the safe engine without any swap.
import { compileUserRegex, type UserRegex } from "../shared/user-regex.ts";

const NativeRegExp = RegExp;
/** Compiled patterns by source; typebox's error path rebuilds them for every object it visits. */
const cache = new Map<string, UserRegex | null>();
const CACHE_SIZE = 512;
let depth = 0;
let compiling = false;

function userRegex(pattern: string): UserRegex | null {
  let r = cache.get(pattern);
  if (r === undefined) {
    compiling = true;
    try {
      const c = compileUserRegex(pattern);
      r = c.ok ? c.regex : null;
    } finally {
      compiling = false;
    }
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(pattern, r);
  }
  return r;
}

/** What typebox calls `.test` on: the user pattern on the safe engine. */
class SafePattern {
  constructor(
    readonly source: string,
    readonly regex: UserRegex,
  ) {}
  test(value: string): boolean {
    return this.regex.test(value);
  }
}

function PatternRegExp(this: unknown, pattern: unknown, flags?: unknown) {
  if (flags === "u" && typeof pattern === "string" && !compiling) {
    const r = userRegex(pattern);
    if (r) return new SafePattern(pattern, r);
  }
  return Reflect.construct(NativeRegExp, [pattern, flags], NativeRegExp);
}
// Statics, `instanceof RegExp` and `RegExp.prototype` stay those of the real RegExp.
PatternRegExp.prototype = NativeRegExp.prototype;
Object.setPrototypeOf(PatternRegExp, NativeRegExp);

/** Runs `fn` (a typebox compile or Errors call) with user patterns on the linear-time engine. */
export function withUserPatterns<T>(fn: () => T): T {
  const g = globalThis as { RegExp: RegExpConstructor };
  if (depth++ === 0) g.RegExp = PatternRegExp as unknown as RegExpConstructor;
  try {
    return fn();
  } finally {
    if (--depth === 0) g.RegExp = NativeRegExp;
  }
}
