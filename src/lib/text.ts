// What a name shown to people may hold (org, workflow, step, token, user display names), and what
// any stored text may. A name is one line of text: no control characters (C0 and C1: a NUL, which
// PostgreSQL cannot store and SQLite would, a line break or an escape that rewrites a terminal),
// no line or paragraph separator (U+2028, U+2029: a line break to every Unicode-aware display),
// no bidirectional embeddings, overrides or isolates (U+202A–U+202E, U+2066–U+2069: they make a
// name display as another, "Acme\u202Etset" as "Acmetest"; the marks U+200E/U+200F stay, mixed
// scripts need them), and no unpaired surrogates (no encoding stores one: they came back as
// U+FFFD). Longer text (descriptions) may hold line breaks and tabs; only U+0000 and unpaired
// surrogates are refused there, for the same reasons.

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
const NOT_IN_NAMES = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

export const NAME_CHARACTERS =
  "may not contain control characters, line separators, bidirectional overrides or isolates, or unpaired surrogates";

/** True when `s` may be a name (its length is the caller's to check). */
export const nameCharactersOk = (s: string): boolean => !NOT_IN_NAMES.test(s) && s.isWellFormed();

/**
 * The length of `s` in characters (Unicode code points), as JSON Schema's minLength and maxLength
 * count it: the OpenAPI document's bounds are the server's. String.length counts UTF-16 code
 * units, two for every character outside the Basic Multilingual Plane (most emoji): a token name
 * of 100 emoji was refused though the document's maxLength 100 allows it.
 */
export function charCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one character (unpaired ones count as one each).
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/**
 * True when JSON.stringify's text of a value holds an unpaired surrogate: it writes one as a
 * `\udXXX` escape (a pair as the character itself), which strict JSON parsers refuse; an even
 * run of backslashes before it is text, not an escape.
 */
export const jsonHasLoneSurrogate = (json: string): boolean => /(?<!\\)(?:\\\\)*\\ud[89a-f]/.test(json);

/** The reason given where stored JSON may not hold one. */
export const NO_LONE_SURROGATES =
  "may not contain unpaired surrogates (an escape such as \\ud800 without its pair)";

/**
 * True when a parsed JSON value holds a number that JSON cannot write back: a literal past a
 * 64-bit float's range (`1e400`, `-1e400`) parses as ±Infinity, which JSON.stringify writes as
 * `null`, so `{"const": 1e400}` was stored, and run, as `{"const": null}`. Walked without
 * recursion (the values' nesting is bounded before, but not by this).
 */
export function jsonHasOverflow(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return true;
    } else if (v !== null && typeof v === "object") {
      for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push(x);
    }
  }
  return false;
}

/** The reason given where stored JSON may not hold one. */
export const NO_OVERFLOW =
  "may not hold a number beyond a 64-bit float's range (such as 1e400): it would be stored as null";

/** True when `s` may be stored as multi-line text. */
export const textCharactersOk = (s: string): boolean => !s.includes("\u0000") && s.isWellFormed();

/** Longest piece of a client's input an error message repeats. */
export const ECHO_MAX = 100;

/**
 * The client's input as an error message repeats it: quoted, and cut to ECHO_MAX characters
 * with "…". Messages are built from input of any length (a 1 MB username made a 1 MB answer);
 * the cut never splits a surrogate pair.
 */
export function quote(input: unknown): string {
  return `"${clip(String(input))}"`;
}

/** `s` cut to ECHO_MAX characters with "…" (for a field name taken from the client's keys). */
export function clip(s: string): string {
  return s.length <= ECHO_MAX ? s : `${headOf(s, ECHO_MAX)}…`;
}

/**
 * The first `units` UTF-16 code units of `s`, one fewer when the cut would split a surrogate
 * pair: `slice` alone leaves half an emoji, a lone surrogate that JSON.stringify writes as the
 * escape "\ud83d", which strict JSON parsers refuse.
 */
export function headOf(s: string, units: number): string {
  const cut = s.slice(0, units);
  return /[\ud800-\udbff]$/.test(cut) && /^[\udc00-\udfff]/.test(s.slice(units, units + 1))
    ? cut.slice(0, -1)
    : cut;
}

/**
 * The characters that make text display otherwise than it reads — bidirectional embeddings,
 * overrides and isolates, and the line and paragraph separators (those refused in names above) —
 * in text that may hold them (a finding's message, a document): shown as `\uNNNN`, not obeyed,
 * wherever people read it (`assay validate`, the HTML report, the web app).
 */
const HIDDEN_CONTROLS = /[\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export const showHiddenControls = (s: string): string =>
  s.replace(HIDDEN_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16)}`);

export const hasHiddenControls = (s: string): boolean => s.search(HIDDEN_CONTROLS) >= 0;

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
/**
 * The text of UTF-8 bytes (a leading BOM dropped), or null when they are not UTF-8: a file read
 * as "utf8" puts U+FFFD where its bytes are not, and a name in Latin-1 was stored as "caf\uFFFD".
 */
export function utf8Text(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}
