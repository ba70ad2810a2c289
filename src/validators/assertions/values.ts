// Between the submission and CEL: parsed data → CEL values, and CEL values → text for messages.
import { isCelList, isCelMap, isCelType, isCelUint } from "@bufbuild/cel";
import { isReflectMessage } from "@bufbuild/protobuf/reflect";
import { headOf } from "../../lib/text.ts";
import { MAX_INT, MIN_INT } from "./ext/numbers.ts";
import { durationText, timestampText } from "./ext/time.ts";
import { view } from "./views.ts";

/** Number literals with a fraction or an exponent, and plain integer literals (strings too). */
const FLOAT_LITERAL = /-?(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)/g;
const INT_LITERAL = /(?<![0-9.eE+-])-?[0-9]+(?![0-9.eE])/g;

/** An integer literal outside a string, of 16 digits or more: 2^53 and beyond have 16. */
const LONG_INT_LITERAL = /(?<![0-9.eE+"-])-?[0-9]{16,}(?![0-9.eE"])/g;

/**
 * A JSON document as CEL values, its numbers typed by their text as CEL types literals: digits
 * only → `int` (`data.count + 1` works), a fraction or exponent → `double`, so "19.0" is a double
 * although JSON.parse made it the number 19. `parsed` is JSON.parse's value. A reviver that sees
 * each number's text makes JSON.parse ~80× slower, so it is used only when the text holds the
 * same integral value written both ways ("19" and "19.0"), or an integer JSON.parse cannot hold
 * exactly (≥ 2^53: a 64-bit id would compare as its rounded neighbour), which scans tell.
 */
export function jsonToCel(text: string, parsed: unknown): unknown {
  for (const m of text.matchAll(LONG_INT_LITERAL)) {
    if (!Number.isSafeInteger(Number(m[0]))) return toCel(JSON.parse(text, jsonNumber as never), () => false);
  }
  const integralFloats = new Set<number>();
  for (const m of text.matchAll(FLOAT_LITERAL)) {
    const n = Number(m[0]);
    if (Number.isInteger(n)) integralFloats.add(n);
  }
  if (integralFloats.size === 0) return toCel(parsed, (n) => Number.isSafeInteger(n));
  for (const m of text.matchAll(INT_LITERAL))
    if (integralFloats.has(Number(m[0]))) return toCel(JSON.parse(text, jsonNumber as never), () => false);
  return toCel(parsed, (n) => Number.isSafeInteger(n) && !integralFloats.has(n));
}

/** JSON.parse's reviver typing numbers by their source text (see jsonToCel). */
function jsonNumber(_key: string, value: unknown, context: { source?: string }): unknown {
  if (typeof value !== "number" || context?.source === undefined) return value;
  if (/^-?[0-9]+$/.test(context.source)) {
    const n = BigInt(context.source);
    if (n <= MAX_INT && n >= MIN_INT) return n;
  }
  return value;
}

/**
 * Parsed values → CEL: objects become maps (a key like "__proto__" or "constructor" is an
 * ordinary key), arrays lists, bigints `int`, numbers `int` where `isInt` says so, else `double`.
 * Converted when read (views.ts): the document is not copied into CEL's own maps and lists.
 */
export const toCel = (v: unknown, isInt: (n: number) => boolean): unknown => view(v, isInt);

/**
 * YAML's parser does not keep "19.0" apart from "19": safe integers are `int`. Integers beyond
 * 2^53 come as bigints (shared/yaml.ts `exactIntegers`), `int` when in range.
 */
export const yamlToCel = (v: unknown) => toCel(v, (n) => Number.isSafeInteger(n));

/** A CEL value as text in messages: strings bare, everything else in CEL-like notation. */
export function show(v: unknown): string {
  return typeof v === "string" ? v : literal(v, 0);
}

const MAX_SHOWN = 2000;

function literal(v: unknown, depth: number): string {
  if (depth > 20) return "…";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (typeof v === "number") return String(v);
  if (v === null || v === undefined) return "null";
  if (isCelUint(v)) return `${v.value}u`;
  if (v instanceof Uint8Array)
    return `b"${[...v].map((b) => (b >= 32 && b < 127 && b !== 34 && b !== 92 ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`)).join("")}"`;
  if (isCelList(v)) return clip(`[${[...limited(v)].map((x) => literal(x, depth + 1)).join(", ")}]`);
  if (isCelMap(v))
    return clip(
      `{${[...limited(v)].map(([k, x]) => `${literal(k, depth + 1)}: ${literal(x, depth + 1)}`).join(", ")}}`,
    );
  if (isCelType(v)) return v.name;
  if (isReflectMessage(v)) {
    // As string() writes them (ext/time.ts), so a message reads as the rule's author would.
    if (v.desc.typeName === "google.protobuf.Timestamp") return timestampText(v.message as never);
    if (v.desc.typeName === "google.protobuf.Duration") return durationText(v.message as never);
    return v.desc.typeName;
  }
  return String(v);
}

/** The first 100 items: a message never lists a whole document. */
function* limited<T>(items: Iterable<T>): Generator<T> {
  let n = 0;
  for (const x of items) {
    if (n++ === 100) return;
    yield x;
  }
}

const clip = (s: string) => (s.length > MAX_SHOWN ? `${headOf(s, MAX_SHOWN)}…` : s);
