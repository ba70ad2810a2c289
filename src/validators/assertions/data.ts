// The submission as CEL values. JSON/YAML: the parsed document (integers become CEL ints, other
// numbers doubles). XML: fast-xml-parser objects (attributes "@name", text "#text", all values
// strings) after libxml2 has vouched for well-formedness. CSV: one map per record keyed by the
// header, values strings. `rows` are what per-row rules iterate: CSV records or a top-level array.
import { XMLParser } from "fast-xml-parser";
import { resolveDialect, scanCsv } from "../shared/csv.ts";
import { finding } from "../shared/findings.ts";
import { isJsonProblem, jsonPointerOffset, parseJson } from "../shared/json.ts";
import { LineIndex, type Position } from "../shared/position.ts";
import { parseXml, problemFinding } from "../shared/xml.ts";
import { parseYaml, yamlPointerOffset, yamlValue } from "../shared/yaml.ts";
import type { Finding, ValidationInput } from "../types.ts";

export interface Row {
  value: unknown;
  path: string;
  position: Position | null;
}

export interface Subject {
  data?: unknown;
  rows?: Row[];
  problems?: Finding[];
}

/** Own property even for a key like "__proto__" (plain assignment would set the prototype). */
function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** JSON numbers → CEL: safe integers as int (BigInt) so `data.count + 1` works; others double. */
export function toCel(v: unknown): unknown {
  if (typeof v === "number") return Number.isSafeInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, toCel(x));
    return out;
  }
  return v;
}

function arrayRows(value: unknown, position: (pointer: string) => Position | null): Row[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((v, i) => ({ value: v, path: `/${i}`, position: position(`/${i}`) }));
}

const xmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  textNodeName: "#text",
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
});

function csvSubject(input: ValidationInput): Subject {
  const lines = new LineIndex(input.text);
  let labels: string[] = [];
  const rows: Row[] = [];
  const problem = scanCsv(input.text, resolveDialect(input.text), (rec) => {
    if (rec.number === 1) labels = rec.cells;
    else {
      const value: Record<string, string> = {};
      labels.forEach((l, i) => {
        if (i < rec.cells.length) setOwn(value, l, rec.cells[i]);
      });
      rows.push({ value, path: `/rows/${rec.number}`, position: lines.position(rec.start) });
    }
    return true;
  });
  if (problem) return { problems: [finding(problem.code, problem.message, { ...problem.position })] };
  return { data: rows.map((r) => r.value), rows };
}

/** One subject per document (a YAML stream may hold several). */
export function subjects(input: ValidationInput): Subject[] {
  switch (input.fileType) {
    case "JSON": {
      const r = parseJson(input.text);
      if (isJsonProblem(r)) return [{ problems: [finding(r.code, r.message, { ...r.position })] }];
      const pos = (p: string) => {
        const off = jsonPointerOffset(r.tree(), p);
        return off === null ? null : r.lines.position(off);
      };
      return [{ data: toCel(r.value), rows: arrayRows(toCel(r.value), pos) }];
    }
    case "YAML": {
      const r = parseYaml(input.text);
      const errors = r.problems.filter((p) => p.severity === "error");
      if (errors.length > 0)
        return [{ problems: errors.map((p) => finding(p.code, p.message, { ...p.position })) }];
      if (r.docs.length === 0) return [{ data: null }];
      return r.docs.map((doc) => {
        const v = yamlValue(doc, r.lines);
        if ("code" in v) return { problems: [finding(v.code, v.message, { ...v.position })] };
        const pos = (p: string) => {
          const off = yamlPointerOffset(doc, p);
          return off === null ? null : r.lines.position(off);
        };
        const data = toCel(v.value);
        return { data, rows: arrayRows(data, pos) };
      });
    }
    case "XML": {
      const r = parseXml(input.bytes);
      if ("problems" in r) {
        return [{ problems: r.problems.map(problemFinding) }];
      }
      r.doc.dispose();
      try {
        return [{ data: xmlParser.parse(input.text) }];
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
