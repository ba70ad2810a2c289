// The submission as CEL values (values.ts). JSON/YAML: the parsed document (integers become CEL
// ints, other numbers doubles). XML: fast-xml-parser objects (attributes "@name", text "#text",
// all values strings) after libxml2 has vouched for well-formedness; which elements are lists is
// the step's choice (xml-lists.ts). CSV: one map per record keyed by the header, values strings.
// `rows` are what per-row rules iterate: CSV records or a top-level array.
import { celList, isCelList } from "@bufbuild/cel";
import { XMLParser } from "fast-xml-parser";
import { type CsvRecord, resolveDialect, scanCsv } from "../shared/csv.ts";
import { MAX_XML_DEPTH } from "../limits.ts";
import { finding, pointerJoin } from "../shared/findings.ts";
import { isJsonProblem, parseJson } from "../shared/json.ts";
import { LineIndex, type Position } from "../shared/position.ts";
import { parseXml, problemFinding } from "../shared/xml.ts";
import { prologEnd, withoutCommentsAndPIs } from "../shared/xml-prolog.ts";
import { parseYaml, yamlPointerOffset, yamlValue } from "../shared/yaml.ts";
import type { Finding, ValidationInput } from "../types.ts";
import { jsonToCel, yamlToCel } from "./values.ts";
import { recordViews } from "./views.ts";
import { XML_NAME_ESCAPE, type XmlLists, xmlToCel } from "./xml-lists.ts";

export interface Row {
  value: unknown;
  path: string;
  position: Position | null;
}

export interface Subject {
  data?: unknown;
  rows?: Iterable<Row>;
  /** The data could not be read: these are reported and no rule runs. */
  problems?: Finding[];
  /** Reported before the rules' findings; the rules still run. */
  notes?: Finding[];
  /**
   * Where a finding about the whole subject stands: a document of a YAML stream of several (its
   * root node, as json_schema places path ""), so that each document's findings can be told apart.
   */
  position?: Position | null;
}

/**
 * A top-level array's elements (already CEL values) as rows, made as they are read, each row's
 * position looked up only when a finding asks for it: a document of a million elements neither
 * holds a million rows nor the position tree of its every value (~950 MB for 24 MB of JSON).
 */
function arrayRows(data: unknown, position: (index: number) => Position | null): Iterable<Row> | undefined {
  if (!isCelList(data)) return undefined;
  return {
    *[Symbol.iterator]() {
      let i = 0;
      for (const value of data) {
        const at = i++;
        yield {
          value,
          path: `/${at}`,
          get position() {
            return position(at);
          },
        };
      }
    },
  };
}

/**
 * Offsets of a JSON text's top-level array elements, by one scan of the text (no tree). The text
 * parsed, so it is well-formed; `text` may start with a BOM-replacing space.
 */
function topLevelOffsets(text: string): number[] {
  const out: number[] = [];
  let depth = 0;
  let expecting = false; // after "[" or "," at depth 1: the next non-space starts an element
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    if (expecting && !(depth === 1 && c === 0x5d)) {
      out.push(i);
      expecting = false;
    }
    if (c === 0x22) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth === 1 && c === 0x5b) expecting = true;
    } else if (c === 0x5d || c === 0x7d) depth--;
    else if (c === 0x2c && depth === 1) expecting = true;
  }
  return out;
}

/**
 * Element names fast-xml-parser refuses (`__proto__`, `constructor`, `prototype`: it throws, and
 * the step said the document was not well-formed) or renames (`toString` became `__toString`).
 * They are ordinary XML names: each is handed to the parser behind a character no XML name can
 * hold, and xmlToCel takes it off again (xml-lists.ts). Attributes need nothing: their keys
 * start with "@".
 */
const RESERVED_NAMES = new Set([
  "__proto__",
  "constructor",
  "prototype",
  "hasOwnProperty",
  "toString",
  "valueOf",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
]);

/** An attribute value holding a tab or a line break (perhaps text that looks like one: harmless). */
const ATTRIBUTE_WITH_BREAK = /=\s*(?:"[^"]*[\t\n\r][^"]*"|'[^']*[\t\n\r][^']*')/;

const xmlParser = new XMLParser({
  transformTagName: (name) => (RESERVED_NAMES.has(name) ? XML_NAME_ESCAPE + name : name),
  // libxml2 has parsed the document first, with its own bounds (depth 256, entity amplification):
  // what it accepts is well-formed, and the parser's smaller defaults (100 levels, entities of
  // 10,000 characters, 100,000 characters expanded) made such documents "not well-formed".
  maxNestedTags: MAX_XML_DEPTH + 1,
  // Character references (`&#65;`, `&#x1F600;`) are decoded only with this option; left alone,
  // `<qty>&#49;0</qty>` read "&#49;0". The HTML names it adds never reach the parser: libxml2
  // refuses an undeclared entity, and a document with a DTD arrives serialized, entities expanded.
  htmlEntities: true,
  processEntities: {
    enabled: true,
    maxEntitySize: Number.POSITIVE_INFINITY,
    maxExpansionDepth: Number.POSITIVE_INFINITY,
    maxExpandedLength: Number.POSITIVE_INFINITY,
    maxEntityCount: Number.POSITIVE_INFINITY,
  },
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  textNodeName: "#text",
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // An element's text as written: `<sku> A-1 </sku>` is " A-1 ", as XPath's string() reads it
  // (the parser's default trimmed it, and made mixed content "a <b/> c" read "ac"). The
  // indentation between child elements is dropped in xml-lists.ts.
  trimValues: false,
});

export interface DataOptions {
  xmlLists: XmlLists;
}

/**
 * A label used twice: a record's map can hold one value under it (the last column's). Reported as
 * csv_table reports it, an error on the repeated label, so the author knows `row.qty` hides one.
 */
function duplicateLabels(header: CsvRecord, lines: LineIndex): Finding[] {
  const first = new Map<string, number>();
  const out: Finding[] = [];
  header.cells.forEach((label, i) => {
    const earlier = first.get(label);
    if (earlier === undefined) first.set(label, i);
    else
      out.push(
        finding(
          "csv.duplicate_label",
          `label "${label}" repeats column ${earlier + 1} (rules read column ${header.cells.lastIndexOf(label) + 1}'s value under "${label}")`,
          { path: pointerJoin("/rows/1", label), ...lines.position(header.cellStarts[i] ?? header.start) },
        ),
      );
  });
  return out;
}

function csvSubject(input: ValidationInput): Subject {
  const lines = new LineIndex(input.text);
  let record = recordViews([]);
  let notes: Finding[] = [];
  const rows: Row[] = [];
  const problem = scanCsv(input.text, resolveDialect(input.text), (rec) => {
    if (rec.number === 1) {
      record = recordViews(rec.cells);
      notes = duplicateLabels(rec, lines);
    } else {
      const value = record(rec.cells);
      rows.push({ value, path: `/rows/${rec.number}`, position: lines.position(rec.start) });
    }
    return true;
  });
  if (problem) return { problems: [finding(problem.code, problem.message, { ...problem.position })] };
  return { data: celList(rows.map((r) => r.value) as never[]), rows, notes };
}

/** One subject per document (a YAML stream may hold several). */
export function subjects(input: ValidationInput, options: DataOptions): Subject[] {
  switch (input.fileType) {
    case "JSON": {
      const r = parseJson(input.text);
      if (isJsonProblem(r)) return [{ problems: [finding(r.code, r.message, { ...r.position })] }];
      let offsets: number[] | null = null;
      const pos = (i: number) => {
        offsets ??= topLevelOffsets(input.text);
        const off = offsets[i];
        return off === undefined ? null : r.lines.position(off);
      };
      const data = jsonToCel(input.text, r.value);
      return [{ data, rows: arrayRows(data, pos) }];
    }
    case "YAML": {
      const r = parseYaml(input.text);
      const errors = r.problems.filter((p) => p.severity === "error");
      if (errors.length > 0)
        return [{ problems: errors.map((p) => finding(p.code, p.message, { ...p.position })) }];
      if (r.docs.length === 0) return [{ data: null }];
      return r.docs.map((doc) => {
        const v = yamlValue(doc, r.lines, true);
        if ("code" in v) return { problems: [finding(v.code, v.message, { ...v.position, path: v.path })] };
        const pos = (i: number) => {
          const off = yamlPointerOffset(doc, `/${i}`);
          return off === null ? null : r.lines.position(off);
        };
        const data = yamlToCel(v.value);
        const root = r.docs.length > 1 ? yamlPointerOffset(doc, "") : null;
        return { data, rows: arrayRows(data, pos), position: root === null ? null : r.lines.position(root) };
      });
    }
    case "XML": {
      const r = parseXml(input.bytes);
      if ("problems" in r) {
        return [{ problems: r.problems.map((p) => problemFinding(p, input.text)) }];
      }
      let text = input.text;
      try {
        // A DTD is libxml2's to read: fast-xml-parser refused what XML allows there (an external
        // entity's declaration: "External entities are not supported"; a parameter entity:
        // "Invalid entity name %") and inserted an entity's markup as text. libxml2 has expanded
        // the entities (external ones stand for nothing), so the parser gets its serialization.
        // Likewise an attribute value written over lines or with tabs: XML 1.0 §3.3.3 makes each
        // of them a space (`x="a<TAB>b"` is "a b", as XPath reads it), which fast-xml-parser does
        // not do; libxml2 has, and writes a character reference where one was meant.
        if (
          /<!DOCTYPE/.test(withoutCommentsAndPIs(text.slice(0, prologEnd(text)))) ||
          ATTRIBUTE_WITH_BREAK.test(text)
        )
          text = r.doc.root.toString({ format: false });
      } finally {
        r.doc.dispose();
      }
      try {
        return [{ data: xmlToCel(xmlParser.parse(text), options.xmlLists) }];
      } catch (e) {
        return [
          { problems: [finding("xml.not_well_formed", (e as Error).message, { rule: "xml:well-formed" })] },
        ];
      }
    }
    case "CSV":
      return [csvSubject(input)];
    default:
      return [
        { problems: [finding("assertion.error", `assertions do not support ${input.fileType} files`)] },
      ];
  }
}
