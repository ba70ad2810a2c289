// fn:string-to-codepoints and fn:compare for Schematron, by code point as XPath 3.1 says (the
// Unicode codepoint collation is the default and only one). fontoxpath's read JavaScript's
// UTF-16 code units: string-to-codepoints('😀') was (55357, 56832), which codepoints-to-string()
// then refused (FOCH0001), and compare('😀', '＄') was -1 though U+1F600 comes after U+FF04.
// xpath.ts resolves the names here; codepoint-order.ts rewrites the comparison operators (`<`,
// `gt` …), fn:min/fn:max and array:sort on strings to use compare, min, max and order from here.
import fx from "fontoxpath";

export const CODEPOINT_NS = "urn:assay:schematron:codepoint";
const CODEPOINT_COLLATION = "http://www.w3.org/2005/xpath-functions/collation/codepoint";

/** -1, 0 or 1 as the code points of `a` and `b` order them. */
function compareCodePoints(a: string, b: string): number {
  const x = a[Symbol.iterator]();
  const y = b[Symbol.iterator]();
  for (;;) {
    const p = x.next();
    const q = y.next();
    if (p.done || q.done) return p.done && q.done ? 0 : p.done ? -1 : 1;
    const d = (p.value.codePointAt(0) as number) - (q.value.codePointAt(0) as number);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
}

let registered = false;

/** Registers the signatures in CODEPOINT_NS (once per worker). */
export function registerCodepointFunctions(): void {
  if (registered) return;
  registered = true;
  const name = (localName: string) => ({ namespaceURI: CODEPOINT_NS, localName });
  fx.registerCustomXPathFunction(
    name("string-to-codepoints"),
    ["xs:string?"],
    "xs:integer*",
    (_, s: string | null) => (s === null ? [] : Array.from(s, (c: string) => c.codePointAt(0) as number)),
  );
  fx.registerCustomXPathFunction(name("compare"), ["xs:string?", "xs:string?"], "xs:integer?", (_, a, b) =>
    a === null || b === null ? null : compareCodePoints(a, b),
  );
  // fn:min and fn:max over strings, for codepoint-order.ts.
  for (const [which, sign] of [
    ["min", -1],
    ["max", 1],
  ] as const)
    fx.registerCustomXPathFunction(name(which), ["xs:string*"], "xs:string?", (_, all: string[]) =>
      all.length === 0 ? null : all.reduce((m, s) => (compareCodePoints(s, m) === sign ? s : m)),
    );
  // The 1-based positions of `keys` in code-point order, equal keys in their order (array:sort is
  // stable), for codepoint-order.ts.
  fx.registerCustomXPathFunction(name("order"), ["xs:string*"], "xs:integer*", (_, keys: string[]) =>
    keys
      .map((_, i) => i)
      .sort((i, j) => compareCodePoints(keys[i]!, keys[j]!))
      .map((i) => i + 1),
  );
  fx.registerCustomXPathFunction(
    name("compare"),
    ["xs:string?", "xs:string?", "xs:string"],
    "xs:integer?",
    (_, a, b, collation) => {
      if (collation !== CODEPOINT_COLLATION)
        throw new Error(`FOCH0002: the collation ${collation} is not supported`);
      return a === null || b === null ? null : compareCodePoints(a, b);
    },
  );
}

/** Whether fn:`localName`#`arity` is one of ours. */
export const isCodepointFunction = (localName: string, arity: number) =>
  (localName === "string-to-codepoints" && arity === 1) ||
  (localName === "compare" && (arity === 2 || arity === 3));
