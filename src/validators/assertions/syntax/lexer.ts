// CEL's tokens (cel-spec langdef.md, "Syntax"): numbers with their suffixes, the four string
// quotings with r/b prefixes and every escape form, identifiers, backtick-quoted field names and
// operators. Literal values are decoded here, so the parser only arranges them.
export type Token =
  | { kind: "int" | "uint"; value: bigint; text: string; pos: number }
  | { kind: "double"; value: number; text: string; pos: number }
  | { kind: "string"; value: string; pos: number }
  | { kind: "bytes"; value: Uint8Array; pos: number }
  | { kind: "ident" | "quoted" | "op"; value: string; pos: number }
  | { kind: "eof"; pos: number };

export class CelSyntaxError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(message);
  }
}

/** Two-character operators are tried before one-character ones, so `<=` is not `<` then `=`. */
const OPERATORS = ["||", "&&", "==", "!=", "<=", ">=", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":"];
const PUNCTUATION = new Set([".", ",", "(", ")", "[", "]", "{", "}"]);
const SIMPLE_ESCAPES: Record<string, number> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  "\\": 92,
  "'": 39,
  '"': 34,
  "`": 96,
  "?": 63,
};
/** A field name between backticks (langdef: letters, digits, `_ . - /` and space). */
const QUOTED_NAME = /^[A-Za-z0-9_.\-/ ]+$/;

const utf8 = new TextEncoder();

const isDigit = (c: string) => c >= "0" && c <= "9";
const isHex = (c: string) => /^[0-9a-fA-F]$/.test(c);
const isIdentStart = (c: string) => (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_";
const isIdentPart = (c: string) => isIdentStart(c) || isDigit(c);

export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f") {
      i++;
    } else if (c === "/" && src[i + 1] === "/") {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (isDigit(c) || (c === "." && isDigit(src[i + 1] ?? ""))) {
      i = number(src, i, out);
    } else if (isIdentStart(c)) {
      const prefix = "rRbB".includes(c) ? /^(?:[rR][bB]?|[bB][rR]?)(?=['"])/.exec(src.slice(i, i + 3)) : null;
      if (prefix) {
        i = string(src, i + prefix[0].length, /[rR]/.test(prefix[0]), /[bB]/.test(prefix[0]), out, i);
      } else {
        const start = i;
        while (i < src.length && isIdentPart(src[i])) i++;
        out.push({ kind: "ident", value: src.slice(start, i), pos: start });
      }
    } else if (c === "'" || c === '"') {
      i = string(src, i, false, false, out, i);
    } else if (c === "`") {
      const end = src.indexOf("`", i + 1);
      const name = end < 0 ? "" : src.slice(i + 1, end);
      if (!QUOTED_NAME.test(name))
        throw new CelSyntaxError(
          "a quoted field name holds letters, digits, _ . - / or spaces between backticks",
          i,
        );
      out.push({ kind: "quoted", value: name, pos: i });
      i = end + 1;
    } else if (PUNCTUATION.has(c)) {
      out.push({ kind: "op", value: c, pos: i });
      i++;
    } else {
      const two = src.slice(i, i + 2);
      const op = OPERATORS.includes(two) ? two : OPERATORS.includes(c) ? c : undefined;
      if (!op)
        throw new CelSyntaxError(
          `unexpected character '${String.fromCodePoint(src.codePointAt(i) ?? 0)}'`,
          i,
        );
      out.push({ kind: "op", value: op, pos: i });
      i += op.length;
    }
  }
  out.push({ kind: "eof", pos: src.length });
  return out;
}

function number(src: string, start: number, out: Token[]): number {
  let i = start;
  if (src[i] === "0" && (src[i + 1] === "x" || src[i + 1] === "X")) {
    i += 2;
    const digits = i;
    while (i < src.length && isHex(src[i])) i++;
    if (i === digits) throw new CelSyntaxError("a hexadecimal literal needs digits after 0x", start);
    return integer(src, start, i, BigInt(`0x${src.slice(digits, i)}`), out);
  }
  while (i < src.length && isDigit(src[i])) i++;
  let float = false;
  if (src[i] === "." && isDigit(src[i + 1] ?? "")) {
    float = true;
    i++;
    while (i < src.length && isDigit(src[i])) i++;
  }
  const exponent = src[i] === "e" || src[i] === "E" ? /^[eE][+-]?[0-9]+/.exec(src.slice(i, i + 400)) : null;
  if (exponent) {
    float = true;
    i += exponent[0].length;
  }
  const text = src.slice(start, i);
  if (float) {
    const value = Number(text);
    if (!Number.isFinite(value)) throw new CelSyntaxError(`the number ${text} is out of range`, start);
    out.push({ kind: "double", value, text, pos: start });
    return i;
  }
  return integer(src, start, i, BigInt(text), out);
}

function integer(src: string, start: number, end: number, value: bigint, out: Token[]): number {
  const text = src.slice(start, end);
  if (src[end] === "u" || src[end] === "U") {
    if (value > 0xffff_ffff_ffff_ffffn)
      throw new CelSyntaxError(`the unsigned integer ${text}u is out of range`, start);
    out.push({ kind: "uint", value, text, pos: start });
    return end + 1;
  }
  // The sign is the parser's business: -9223372036854775808 is in range, its magnitude is not.
  if (value > 0x8000_0000_0000_0000n) throw new CelSyntaxError(`the integer ${text} is out of range`, start);
  out.push({ kind: "int", value, text, pos: start });
  return end;
}

/** Reads a quoted literal starting at `open` (the quote); `tokenStart` includes the prefix. */
function string(
  src: string,
  open: number,
  raw: boolean,
  bytes: boolean,
  out: Token[],
  tokenStart: number,
): number {
  const q = src[open];
  const triple = src.startsWith(q.repeat(3), open);
  const close = triple ? q.repeat(3) : q;
  let i = open + close.length;
  const units: number[] = []; // bytes: octets; strings: code points
  const pushText = (ch: string) => {
    if (bytes) units.push(...utf8.encode(ch));
    else units.push(ch.codePointAt(0) ?? 0);
  };
  for (;;) {
    if (i >= src.length) throw new CelSyntaxError("the quoted text is not closed", tokenStart);
    if (src.startsWith(close, i)) break;
    const c = src[i];
    if (!triple && (c === "\n" || c === "\r"))
      throw new CelSyntaxError("a line break inside quotes needs triple quotes or \\n", i);
    if (c === "\\" && !raw) {
      i = escapeSequence(src, i, bytes, units);
      continue;
    }
    const cp = src.codePointAt(i) ?? 0;
    pushText(String.fromCodePoint(cp));
    i += cp > 0xffff ? 2 : 1;
  }
  if (bytes) out.push({ kind: "bytes", value: Uint8Array.from(units), pos: tokenStart });
  else out.push({ kind: "string", value: String.fromCodePoint(...units), pos: tokenStart });
  return i + close.length;
}

function escapeSequence(src: string, at: number, bytes: boolean, units: number[]): number {
  const c = src[at + 1] ?? "";
  if (c in SIMPLE_ESCAPES) {
    units.push(SIMPLE_ESCAPES[c]);
    return at + 2;
  }
  const fixed = (len: number, radix: number, test: (s: string) => boolean) => {
    const digits = src.slice(at + 2, at + 2 + len);
    if (digits.length !== len || ![...digits].every(test))
      throw new CelSyntaxError(
        `the escape \\${c} needs ${len} ${radix === 16 ? "hexadecimal" : "octal"} digits`,
        at,
      );
    return Number.parseInt(digits, radix);
  };
  if (c === "x" || c === "X") {
    units.push(fixed(2, 16, isHex));
    return at + 4;
  }
  if (c >= "0" && c <= "3") {
    const digits = src.slice(at + 1, at + 4);
    if (!/^[0-3][0-7]{2}$/.test(digits))
      throw new CelSyntaxError("an octal escape is \\ and three digits 000-377", at);
    units.push(Number.parseInt(digits, 8));
    return at + 4;
  }
  if ((c === "u" || c === "U") && !bytes) {
    const cp = fixed(c === "u" ? 4 : 8, 16, isHex);
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
      throw new CelSyntaxError(
        `\\${c}${src.slice(at + 2, at + (c === "u" ? 6 : 10))} is not a Unicode scalar value`,
        at,
      );
    units.push(cp);
    return at + (c === "u" ? 6 : 10);
  }
  throw new CelSyntaxError(`unknown escape sequence \\${c}`, at);
}
