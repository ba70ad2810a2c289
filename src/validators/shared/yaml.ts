// YAML 1.2 via `yaml`: every document of a stream, errors with offsets, duplicate keys as errors,
// and node ranges to map a JSON Pointer back to line/column.
import { type Document, isAlias, isMap, isScalar, isSeq, type Node, parseAllDocuments } from "yaml";
import { MAX_JSON_DEPTH, MAX_YAML_ALIAS_COUNT } from "../limits.ts";
import { pointerSegments } from "./findings.ts";
import { LineIndex, type Position } from "./position.ts";

export interface YamlProblem {
  code: "yaml.syntax_error" | "yaml.max_depth" | "yaml.alias_limit";
  message: string;
  position: Position | null;
  severity: "error" | "warning";
}

export interface ParsedYaml {
  docs: Document.Parsed[];
  problems: YamlProblem[];
  lines: LineIndex;
}

/** "Map keys must be unique at line 2, column 1:\n<context>" → "Map keys must be unique". */
function cleanMessage(message: string): string {
  return message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
}

export function parseYaml(text: string): ParsedYaml {
  const lines = new LineIndex(text);
  const problems: YamlProblem[] = [];
  let docs: Document.Parsed[] = [];
  try {
    const parsed = parseAllDocuments(text, { uniqueKeys: true });
    docs = Array.isArray(parsed) ? parsed : [];
  } catch (e) {
    // A stack overflow on absurd nesting is a finding, not a crash.
    const deep = e instanceof RangeError;
    problems.push({
      code: deep ? "yaml.max_depth" : "yaml.syntax_error",
      message: deep ? `nesting deeper than the parser can handle` : (e as Error).message,
      position: null,
      severity: "error",
    });
    return { docs: [], problems, lines };
  }
  for (const doc of docs) {
    for (const [list, severity] of [
      [doc.errors, "error"],
      [doc.warnings, "warning"],
    ] as const) {
      for (const err of list) {
        const message = cleanMessage(err.message);
        problems.push({
          code: "yaml.syntax_error",
          message: err.code === "DUPLICATE_KEY" ? `duplicate key: ${message}` : message,
          position: lines.position(err.pos[0]),
          severity,
        });
      }
    }
  }
  return { docs, problems, lines };
}

/** Offset of the first node nested deeper than MAX_JSON_DEPTH, or -1 (iterative walk). */
export function yamlDepthExceededAt(doc: Document.Parsed): number {
  const stack: Array<[unknown, number]> = [[doc.contents, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (isMap(node) || isSeq(node)) {
      if (depth > MAX_JSON_DEPTH) return node.range?.[0] ?? 0;
      for (const item of node.items as unknown[]) {
        if (isMap(node)) {
          const pair = item as { key: unknown; value: unknown };
          stack.push([pair.key, depth + 1], [pair.value, depth + 1]);
        } else stack.push([item, depth + 1]);
      }
    }
  }
  return -1;
}

/** Builds the plain value of a document, or a problem (alias bomb, unresolved alias, depth). */
export function yamlValue(doc: Document.Parsed, lines: LineIndex): { value: unknown } | YamlProblem {
  const deep = yamlDepthExceededAt(doc);
  if (deep >= 0) {
    return {
      code: "yaml.max_depth",
      message: `nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
      position: lines.position(deep),
      severity: "error",
    };
  }
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT }) };
  } catch (e) {
    const msg = (e as Error).message;
    const bomb = /Excessive alias count/.test(msg);
    return {
      code: bomb ? "yaml.alias_limit" : "yaml.syntax_error",
      message: bomb ? `aliases expand to too many nodes (billion-laughs guard): ${msg}` : msg,
      position: doc.contents?.range ? lines.position(doc.contents.range[0]) : null,
      severity: "error",
    };
  }
}

/** Offset for a JSON Pointer into a document: the value node, or with `key` the key node. */
export function yamlPointerOffset(doc: Document.Parsed, pointer: string, key = false): number | null {
  let node: unknown = doc.contents;
  let keyNode: Node | undefined;
  const offsetOf = (n: unknown) => ((n as Node | null)?.range ? (n as Node).range![0] : null);
  for (const seg of pointerSegments(pointer)) {
    if (isAlias(node)) node = node.resolve(doc);
    let next: unknown;
    keyNode = undefined;
    if (isMap(node)) {
      for (const pair of node.items) {
        const k = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (k === seg) {
          next = pair.value;
          keyNode = pair.key as Node;
        }
      }
    } else if (isSeq(node) && /^\d+$/.test(seg)) next = node.items[Number(seg)];
    // A missing or null value (e.g. "key:" with nothing after it) points at the key or parent.
    if (next === undefined || next === null) return offsetOf(keyNode) ?? offsetOf(node);
    node = next;
  }
  return key && keyNode ? offsetOf(keyNode) : offsetOf(node);
}
