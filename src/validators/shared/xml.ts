// XML parsing with libxml2-wasm, locked down: no network, no external entities or DTDs
// (XML_PARSE_NO_XXE), entities are NOT substituted (no XML_PARSE_NOENT), and libxml2's default
// limits stay on (no XML_PARSE_HUGE): billion laughs fails fast on the amplification limit.
// The wasm module has no access to the host file system either: belt and braces.
import type { ErrorDetail, XmlDocument } from "libxml2-wasm";
import type { Finding } from "../types.ts";
import { finding } from "./findings.ts";
import { libxml } from "./libxml.ts";
import { LineIndex } from "./position.ts";
import { elementPath, startTagOffsets } from "./xml-paths.ts";

let parseOptions: number | undefined;

/** The parse options above; computed on first use, as the enum lives in the library. */
export function xmlParseOptions(): number {
  if (parseOptions === undefined) {
    const { ParseOption } = libxml();
    parseOptions =
      ParseOption.XML_PARSE_NONET |
      ParseOption.XML_PARSE_NO_XXE |
      ParseOption.XML_PARSE_NOENT |
      ParseOption.XML_PARSE_BIG_LINES;
  }
  return parseOptions;
}

export interface XmlProblem {
  code: string;
  message: string;
  line: number | null;
  column: number | null;
  xpath: string | null;
  severity: "error" | "warning";
  /** Which rule of XML 1.0 (or which of our limits) the document broke. */
  rule: string;
}

/** The `rule` of a parser problem, by its code: see docs/validators.md (XML findings). */
const PARSE_RULES: Record<string, string> = {
  "xml.not_well_formed": "xml:well-formed",
  "xml.entity_expansion_limit": "limit:entity-expansion",
  "xml.max_depth": "limit:depth",
  "xml.warning": "xml:parser-warning",
};

/** A parser problem as the finding validators report, its column in UTF-16 code units. */
export function problemFinding(p: XmlProblem, text: string): Finding {
  const column = utf16Column(text, p.line, p.column);
  return finding(p.code, p.message, { severity: p.severity, line: p.line, column, rule: p.rule });
}

/** The last text asked about: whether it holds a character beyond the BMP, its lines if so. */
let last: { text: string; lines: LineIndex | null } | null = null;

/**
 * libxml2 counts a column in characters; findings count UTF-16 code units, as JSON's and
 * Schematron's do and as SARIF declares (docs/validators.md): a character beyond the BMP earlier
 * on the line (an emoji) put every XML column one short. Only a line holding such characters
 * changes, so a text without any costs one scan, once.
 */
export function utf16Column(text: string, line: number | null, column: number | null): number | null {
  if (line === null || column === null || column <= 1) return column;
  if (last?.text !== text) last = { text, lines: /[\uD800-\uDBFF]/.test(text) ? new LineIndex(text) : null };
  const { lines } = last;
  if (lines === null || line > lines.lineCount) return column;
  const own = lineText(lines, line).text;
  let units = 0;
  let chars = 0;
  while (chars < column - 1 && units < own.length) {
    units += (own.codePointAt(units) ?? 0) > 0xffff ? 2 : 1;
    chars++;
  }
  return units + (column - 1 - chars) + 1;
}

/** Finer codes for the resource limits, so users can tell an attack guard from a typo. */
function parseCode(message: string): string {
  if (/amplification|entity reference loop|entity nesting|Detected an entity reference/i.test(message)) {
    return "xml.entity_expansion_limit";
  }
  if (/Excessive depth in document/i.test(message)) return "xml.max_depth";
  return "xml.not_well_formed";
}

export function toProblem(d: ErrorDetail, code: string): XmlProblem {
  return {
    code,
    message: d.message.trim(),
    line: d.line > 0 ? d.line : null,
    column: d.col > 0 ? d.col : null,
    xpath: d.xpath ?? null,
    severity: d.level >= 2 ? "error" : "warning",
    rule: PARSE_RULES[code] ?? "xml:well-formed",
  };
}

/**
 * A lone CR as LF, which XML 1.0 §2.11 makes it anyway: libxml2 does not count a lone CR as a line
 * break, so its findings named line 1 where the document (and every other step) had line 3. Only
 * for encodings where byte 0x0D is always CR (not UTF-16/32: a BOM or a NUL in the first bytes);
 * the length is unchanged, so columns hold.
 */
export function loneCrAsLf(bytes: Uint8Array): Uint8Array {
  let i = bytes.indexOf(13);
  if (i < 0) return bytes;
  const head = bytes.subarray(0, 4);
  if ((head[0] === 0xfe && head[1] === 0xff) || (head[0] === 0xff && head[1] === 0xfe) || head.includes(0))
    return bytes;
  let out: Uint8Array | null = null;
  for (; i >= 0; i = bytes.indexOf(13, i + 1)) {
    if (bytes[i + 1] === 10) continue;
    out ??= bytes.slice();
    out[i] = 10;
  }
  return out ?? bytes;
}

/**
 * Parses XML bytes (libxml2 honours the encoding declaration). The caller owns the returned
 * document and must dispose it.
 */
export function parseXml(
  source: Uint8Array,
): { doc: XmlDocument; warnings: XmlProblem[] } | { problems: XmlProblem[] } {
  const { XmlDocument, XmlParseError } = libxml();
  const bytes = loneCrAsLf(source);
  try {
    const doc = XmlDocument.fromBuffer(bytes, { option: xmlParseOptions() });
    return { doc, warnings: doc.warnings.map((w) => toProblem(w, "xml.warning")) };
  } catch (e) {
    if (e instanceof XmlParseError && validityOnly(e.details)) return reparseSkippingIds(bytes, e.details);
    if (e instanceof XmlParseError) {
      const problems = e.details.map((d) =>
        ID_REDEFINED.test(d.message.trim())
          ? toProblem({ ...d, level: 1 }, "xml.warning")
          : toProblem(d, d.level >= 2 ? parseCode(d.message) : "xml.warning"),
      );
      if (problems.length > 0) return { problems };
    }
    const message = e instanceof Error ? e.message : String(e);
    return {
      problems: [
        {
          code: parseCode(message),
          message,
          line: null,
          column: null,
          xpath: null,
          severity: "error",
          rule: PARSE_RULES[parseCode(message)]!,
        },
      ],
    };
  }
}

/**
 * "ID x already defined": two attributes the document's own DTD declares of type ID hold one
 * value. That breaks a validity constraint (XML 1.0 VC: ID), not well-formedness, but libxml2
 * records it as an error even when not validating, and libxml2-wasm then throws the document
 * away: every XML step said `xml.not_well_formed` of a document any XML parser accepts.
 */
const ID_REDEFINED = /^ID .* already defined$/s;

function validityOnly(details: ErrorDetail[]): boolean {
  const errors = details.filter((d) => d.level >= 2);
  return errors.length > 0 && errors.every((d) => ID_REDEFINED.test(d.message.trim()));
}

/**
 * The document read again without its DTD's IDs (XML_PARSE_SKIP_IDS), each redefinition kept as
 * a warning. A validating step still judges IDs: XSD's own `xs:ID` types, a DTD step's ATTLIST.
 */
function reparseSkippingIds(
  bytes: Uint8Array,
  details: ErrorDetail[],
): { doc: XmlDocument; warnings: XmlProblem[] } | { problems: XmlProblem[] } {
  const { XmlDocument, ParseOption } = libxml();
  const redefined = details
    .filter((d) => d.level >= 2)
    .map((d) => toProblem({ ...d, level: 1 }, "xml.warning"));
  try {
    const doc = XmlDocument.fromBuffer(bytes, { option: xmlParseOptions() | ParseOption.XML_PARSE_SKIP_IDS });
    return { doc, warnings: [...redefined, ...doc.warnings.map((w) => toProblem(w, "xml.warning"))] };
  } catch {
    return {
      problems: details.map((d) => toProblem(d, d.level >= 2 ? parseCode(d.message) : "xml.warning")),
    };
  }
}

/** The start tag's name a finding's XPath ends on ("*": from the message), and its attribute. */
function target(
  xpath: string,
  message: string,
): { element: string; name: string; attr: string | null } | null {
  const steps = xpath.split("/");
  const last = steps[steps.length - 1] ?? "";
  const attr = last.startsWith("@") ? last.slice(1) : null;
  const element = attr === null ? xpath : steps.slice(0, -1).join("/");
  let name = (attr ?? last).replace(/\[\d+\]$/, "");
  // An element in a default namespace is "*" in libxml2's path; its message names it.
  if (name === "*") name = /^Element '(?:\{[^}]*\})?([^'\s]+)'/.exec(message)?.[1] ?? name;
  // Still "*" (RelaxNG's messages name no element): only the path scan can place it.
  if (name === "*" && attr === null) return { element, name, attr };
  if (!/^[\w.:-]+$/.test(name)) return null;
  return { element, name, attr };
}

function lineText(lines: LineIndex, line: number): { start: number; text: string } {
  const start = lines.lineStart(line);
  const end = line < lines.lineCount ? lines.lineStart(line + 1) : lines.text.length;
  return { start, text: lines.text.slice(start, end) };
}

function startTagPattern(name: string, flags = ""): RegExp {
  const local = name.includes(":") ? name.split(":")[1] : name;
  return new RegExp(`<(?:[\\w.-]+:)?${local.replace(/\./g, "\\.")}(?=[\\s/>])`, flags);
}

export interface PositionQuery {
  line: number | null;
  xpath: string | null;
  message: string;
}

/**
 * libxml2 keeps an element's line in 16 bits: from 65,535 on (XML_PARSE_BIG_LINES) it reports a
 * line guessed from the text nodes around the element, one past the tag when the next text begins
 * with its line break. Such an element is always found by the scan.
 */
const BIG_LINE = 65_535;

/**
 * Start tags located exactly (xml-paths.ts) for the findings whose line may name the wrong one by
 * its first match: the line holds more than one start tag of their element's name, or one and
 * the end of another begun above it, or libxml2's line is past 16 bits. One scan of the text for
 * all of them. Keyed by elementPath. Not done when the document declares an entity whose
 * replacement text may hold elements the scan would not count (entityMayHoldMarkup).
 */
export function exactStartTags(lines: LineIndex, queries: PositionQuery[]): Map<string, number> {
  const wanted = new Set<string>();
  for (const q of queries) {
    if (q.line === null || !q.xpath) continue;
    const t = target(q.xpath, q.message);
    const path = t && elementPath(t.element);
    if (!t || !path || t.attr !== null) continue;
    if (q.line >= BIG_LINE || t.name === "*") {
      wanted.add(path);
      continue;
    }
    const starts = startTagsOnLine(lines, q.line, t.name);
    if (starts > 1 || (starts === 1 && openTagAbove(lines, q.line, t.name) >= 0)) wanted.add(path);
  }
  if (wanted.size === 0 || entityMayHoldMarkup(lines.text)) return new Map();
  return startTagOffsets(lines.text, wanted);
}

/** An internal entity declaration's quoted value (external ones are never loaded: NO_XXE). */
const ENTITY_VALUE = /<!ENTITY\s+(?:%\s+)?[^\s"']+\s+("[^"]*"|'[^']*')/g;

/**
 * Whether a declared entity may put elements in the tree that the text does not show where they
 * are: a value with '<', or with '&' (a reference, `&#60;` among them, may yield one). Plain-text
 * values (`<!ENTITY company "ACME">`), the usual kind, leave every start tag where the text has
 * it. A declaration whose value this does not read (an unmatched quote) counts as markup.
 */
export function entityMayHoldMarkup(text: string): boolean {
  if (!text.includes("<!ENTITY")) return false;
  let declared = 0;
  for (const m of text.matchAll(ENTITY_VALUE)) {
    declared++;
    if (/[<&]/.test(m[1]!)) return true;
  }
  return declared < (text.match(/<!ENTITY/g) ?? []).length;
}

/**
 * The offset of the '<' of a start tag of `name` begun above `line` and still open where it
 * begins, or -1. libxml2 numbers an element by the line its start tag *ends* on, so a start tag
 * written over several lines (one attribute a line) begins above the line it reports. It is the
 * last '<' before that line (an attribute value cannot hold '<'), with no '>' outside its quoted
 * values since.
 */
function openTagAbove(lines: LineIndex, line: number, name: string): number {
  return memo(lines, `above ${line} ${name}`, () => {
    const text = lines.text;
    const from = lines.lineStart(line);
    const open = from > 0 ? text.lastIndexOf("<", from - 1) : -1;
    if (open < 0) return -1;
    const tag = new RegExp(startTagPattern(name).source, "y");
    tag.lastIndex = open;
    if (!tag.test(text)) return -1;
    // One pass from the '<' to the line: a '>' outside quotes ended the tag above it.
    let quote = 0;
    for (let i = open + 1; i < from; i++) {
      const c = text.charCodeAt(i);
      if (quote) {
        if (c === quote) quote = 0;
      } else if (c === 34 || c === 39) quote = c;
      else if (c === 62) return -1;
    }
    return open;
  });
}

/** Start tags of `name` on `line`. */
function startTagsOnLine(lines: LineIndex, line: number, name: string): number {
  return memo(
    lines,
    `starts ${line} ${name}`,
    () => (lineText(lines, line).text.match(startTagPattern(name, "g")) ?? []).length,
  );
}

/**
 * Per document and (line, name): libxml2 can report thousands of errors on one line of a minified
 * document, and each scan of that line (or of a start tag megabytes long) was paid per error —
 * 16,000 errors on a 368 KB line took 8 s.
 */
const memos = new WeakMap<LineIndex, Map<string, number>>();
function memo(lines: LineIndex, key: string, compute: () => number): number {
  let m = memos.get(lines);
  if (!m) {
    m = new Map();
    memos.set(lines, m);
  }
  let v = m.get(key);
  if (v === undefined) {
    v = compute();
    m.set(key, v);
  }
  return v;
}

/**
 * libxml2 reports validity errors with a line but column 0. Recover the position of the element's
 * start tag: the one `exact` (exactStartTags) located, wherever it begins; else the first start
 * tag on that line named by the XPath's last step (or, for "*", by the message), which is right
 * unless the name repeats on the line; else one begun above the line and ending on it.
 */
export function positionForXPath(
  lines: LineIndex,
  line: number | null,
  xpath: string | null,
  message = "",
  exact: ReadonlyMap<string, number> = new Map(),
): { line: number | null; column: number | null } {
  const none = { line, column: null };
  if (line === null || !xpath) return none;
  const t = target(xpath, message);
  if (!t) return none;
  const path = t.attr === null ? elementPath(t.element) : null;
  const at = path === null ? undefined : exact.get(path);
  if (at !== undefined) {
    // On the reported line, or the tag begun above it and ending there: anything else is a
    // path the scan read differently from libxml2, and the guesses below are safer.
    const p = lines.position(at);
    if (p.line === line || line >= BIG_LINE || t.name === "*" || at === openTagAbove(lines, line, t.name))
      return p;
  }
  if (t.name === "*") return none;
  const m = startTagPattern(t.name).exec(lineText(lines, line).text);
  if (m) return { line, column: m.index + 1 };
  const open = openTagAbove(lines, line, t.name);
  return open >= 0 ? lines.position(open) : none;
}
