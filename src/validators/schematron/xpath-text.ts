// Scanning XPath text at the top level: outside brackets, string literals and comments. Enough to
// split a match pattern at `|` or `/` and to read predicates; the engine parses the real thing.

/** Index just past a string literal or comment starting at i, or i when none starts there. */
function skip(expr: string, i: number): number {
  const c = expr[i];
  if (c === '"' || c === "'") {
    const end = expr.indexOf(c, i + 1); // a doubled quote reads as two literals: same extent
    return end < 0 ? expr.length : end + 1;
  }
  if (c === "(" && expr[i + 1] === ":") {
    const end = expr.indexOf(":)", i + 2);
    return end < 0 ? expr.length : end + 2;
  }
  return i;
}

/** Index of the bracket closing the one at `open`, or -1. */
export function closing(expr: string, open: number): number {
  let depth = 0;
  for (let i = open; i < expr.length; i++) {
    const next = skip(expr, i);
    if (next !== i) {
      i = next - 1;
      continue;
    }
    const c = expr[i];
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/**
 * Splits at every top-level match of `separator`, tried on the 5 to 1 characters at each
 * position (longest first). `||` (string concatenation) and `=>` (arrow) are never separators.
 */
export function splitTopLevel(expr: string, separator: RegExp): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < expr.length; i++) {
    const next = skip(expr, i);
    if (next !== i) {
      i = next - 1;
      continue;
    }
    const c = expr[i];
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    else if (depth === 0) {
      if ((c === "|" && expr[i + 1] === "|") || (c === "=" && expr[i + 1] === ">")) {
        i++;
        continue;
      }
      for (let k = 5; k >= 1; k--) {
        if (separator.test(expr.slice(i, i + k))) {
          parts.push(expr.slice(start, i));
          start = i + k;
          i += k - 1;
          break;
        }
      }
    }
  }
  parts.push(expr.slice(start));
  return parts;
}

/** `name(…)` and nothing after the closing parenthesis. */
export function isSingleCall(expr: string): boolean {
  const m = /^[\p{L}_][\p{L}\p{N}_.-]*(?::[\p{L}_][\p{L}\p{N}_.-]*)?\s*\(/u.exec(expr);
  return m !== null && closing(expr, m[0].length - 1) === expr.length - 1;
}
