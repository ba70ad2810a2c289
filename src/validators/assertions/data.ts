// The submission as CEL values (values.ts). JSON/YAML: the parsed document (integers become CEL
// ints, other numbers doubles). XML: fast-xml-parser objects (attributes "@name", text "#text",
// all values strings) after libxml2 has vouched for well-formedness; which elements are lists is
// the step's choice (xml-lists.ts). CSV: one map per record keyed by the header, values strings.
// `rows` are what per-row rules iterate: CSV records or a top-level array.
import { celList, isCelList } from "@bufbuild/cel";
import { XMLParser } from "fast-xml-parser";
import { resolveDialect, scanCsv } from "../shared/csv.ts";
import { finding } from "../shared/findings.ts";
import { isJsonProblem, jsonPointerOffset, parseJson } from "../shared/json.ts";
import { LineIndex, type Position } from "../shared/position.ts";
import { parseXml, problemFinding } from "../shared/xml.ts";
import { parseYaml, yamlPointerOffset, yamlValue } from "../shared/yaml.ts";
import type { Finding, ValidationInput } from "../types.ts";
import { jsonToCel, recordToCel, yamlToCel } from "./values.ts";
import { type XmlLists, xmlToCel } from "./xml-lists.ts";

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

/** A top-level array's elements (already CEL values) as rows. */
function arrayRows(data: unknown, position: (pointer: string) => Position | null): Row[] | undefined {
  if (!isCelList(data)) return undefined;
  return [...data].map((v, i) => ({ value: v, path: `/${i}`, position: position(`/${i}`) }));
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

export interface DataOptions {
  xmlLists: XmlLists;
}

function csvSubject(input: ValidationInput): Subject {
  const lines = new LineIndex(input.text);
  let labels: string[] = [];
  const rows: Row[] = [];
  const problem = scanCsv(input.text, resolveDialect(input.text), (rec) => {
    if (rec.number === 1) labels = rec.cells;
    else {
      const value = recordToCel(labels, rec.cells);
      rows.push({ value, path: `/rows/${rec.number}`, position: lines.position(rec.start) });
    }
    return true;
  });
  if (problem) return { problems: [finding(problem.code, problem.message, { ...problem.position })] };
  return { data: celList(rows.map((r) => r.value) as never[]), rows };
}

/** One subject per document (a YAML stream may hold several). */
export function subjects(input: ValidationInput, options: DataOptions): Subject[] {
  switch (input.fileType) {
    case "JSON": {
      const r = parseJson(input.text);
      if (isJsonProblem(r)) return [{ problems: [finding(r.code, r.message, { ...r.position })] }];
      const pos = (p: string) => {
        const off = jsonPointerOffset(r.tree(), p);
        return off === null ? null : r.lines.position(off);
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
        const v = yamlValue(doc, r.lines);
        if ("code" in v) return { problems: [finding(v.code, v.message, { ...v.position })] };
        const pos = (p: string) => {
          const off = yamlPointerOffset(doc, p);
          return off === null ? null : r.lines.position(off);
        };
        const data = yamlToCel(v.value);
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
        return [{ data: xmlToCel(xmlParser.parse(input.text), options.xmlLists) }];
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
