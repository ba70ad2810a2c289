// XML parsing with libxml2-wasm, locked down: no network, no external entities or DTDs
// (XML_PARSE_NO_XXE), entities are NOT substituted (no XML_PARSE_NOENT), and libxml2's default
// limits stay on (no XML_PARSE_HUGE): billion laughs fails fast on the amplification limit.
// The wasm module has no access to the host file system either: belt and braces.
import type { ErrorDetail, XmlDocument } from "libxml2-wasm";
import type { Finding } from "../types.ts";
import { finding } from "./findings.ts";
import { libxml } from "./libxml.ts";
import type { LineIndex } from "./position.ts";

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

/** A parser problem as the finding validators report. */
export function problemFinding(p: XmlProblem): Finding {
  return finding(p.code, p.message, { severity: p.severity, line: p.line, column: p.column, rule: p.rule });
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
 * Parses XML bytes (libxml2 honours the encoding declaration). The caller owns the returned
 * document and must dispose it.
 */
export function parseXml(
  bytes: Uint8Array,
): { doc: XmlDocument; warnings: XmlProblem[] } | { problems: XmlProblem[] } {
  const { XmlDocument, XmlParseError } = libxml();
  try {
    const doc = XmlDocument.fromBuffer(bytes, { option: xmlParseOptions() });
    return { doc, warnings: doc.warnings.map((w) => toProblem(w, "xml.warning")) };
  } catch (e) {
    if (e instanceof XmlParseError) {
      const problems = e.details.map((d) =>
        toProblem(d, d.level >= 2 ? parseCode(d.message) : "xml.warning"),
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
 * libxml2 reports validity errors with a line but column 0. Recover a column by finding the
 * start tag named by the XPath's last step (or, for "*", by the message) on that line (first
 * occurrence; a heuristic).
 */
export function columnForXPath(
  lines: LineIndex,
  line: number | null,
  xpath: string | null,
  message = "",
): number | null {
  if (line === null || !xpath) return null;
  const last = xpath.split("/").pop() ?? "";
  let name = last.replace(/\[\d+\]$/, "").replace(/^@/, "");
  // An element in a default namespace is "*" in libxml2's path; its message names it.
  if (name === "*") name = /^Element '(?:\{[^}]*\})?([^'\s]+)'/.exec(message)?.[1] ?? name;
  if (!/^[\w.:-]+$/.test(name)) return null;
  const start = lines.lineStart(line);
  const end = line < lines.lineCount ? lines.lineStart(line + 1) : lines.text.length;
  const text = lines.text.slice(start, end);
  const local = name.includes(":") ? name.split(":")[1] : name;
  const m = new RegExp(`<(?:[\\w.-]+:)?${local.replace(/\./g, "\\.")}(?=[\\s/>])`).exec(text);
  return m ? m.index + 1 : null;
}
