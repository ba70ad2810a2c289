// Strict JSON (RFC 8259) with positions. JSON.parse builds the value (fast, and exactly strict
// JSON); jsonc-parser is used only when positions are needed: the offset of a syntax error, or a
// tree, built lazily, to map a JSON Pointer back to line/column. Nesting deeper than
// MAX_JSON_DEPTH is refused before anything recursive sees it (JSC's JSON.parse is iterative).
import { type Node, type ParseError, parseTree, printParseErrorCode, visit } from "jsonc-parser";
import { MAX_JSON_DEPTH } from "../limits.ts";
import { pointerJoin, pointerSegments } from "./findings.ts";
import { depthExceededAt, parsedDepthExceededAt } from "./json-depth.ts";
import { LineIndex, type Position } from "./position.ts";

export { depthExceededAt };

export interface JsonProblem {
  code: "json.syntax_error" | "json.max_depth";
  message: string;
  position: Position;
}

export interface ParsedJson {
  value: unknown;
  /** The syntax tree, built on first call (only findings need it). */
  tree: () => Node | undefined;
  lines: LineIndex;
}

// Keyed by name: ParseErrorCode is a const enum, unusable under verbatimModuleSyntax.
const MESSAGES: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected ':' after the property name",
  CommaExpected: "expected ',' or a closing bracket",
  CloseBraceExpected: "expected '}'",
  CloseBracketExpected: "expected ']'",
  EndOfFileExpected: "unexpected content after the JSON value",
  InvalidCommentToken: "comments are not allowed in JSON",
  UnexpectedEndOfComment: "comments are not allowed in JSON",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "unexpected end of number",
  InvalidUnicode: "invalid \\u escape",
  InvalidEscapeCharacter: "invalid escape sequence",
  InvalidCharacter: "control characters in strings must be escaped",
};

function describe(text: string, err: ParseError): string {
  const ch = text[err.offset];
  if ((ch === "}" || ch === "]") && /,\s*$/.test(text.slice(0, err.offset)))
    return "trailing comma is not allowed";
  return MESSAGES[printParseErrorCode(err.error)] ?? "invalid JSON";
}

const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * Where in a string its error is: jsonc-parser gives the string's opening quote for a control
 * character, a bad escape or a bad \u escape; an editor should land on the character itself, as
 * the XML and YAML errors do. Null for other errors (or none found: the quote then). A raw line
 * break ends the string for jsonc-parser ("unterminated", at the quote, though the string may
 * close on the next line): it is a control character like any other, found here too.
 */
function inString(text: string, err: ParseError): number | null {
  const kind = printParseErrorCode(err.error);
  if (
    kind !== "InvalidCharacter" &&
    kind !== "InvalidEscapeCharacter" &&
    kind !== "InvalidUnicode" &&
    kind !== "UnexpectedEndOfString"
  )
    return null;
  if (text[err.offset] !== '"') return null;
  for (let i = err.offset + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return null; // the closing quote
    if (c < 0x20) return kind === "InvalidCharacter" || kind === "UnexpectedEndOfString" ? i : null;
    if (c !== 0x5c) continue;
    const next = text[i + 1];
    if (next === "u") {
      if (!HEX4.test(text.slice(i + 2, i + 6))) return kind === "InvalidUnicode" ? i : null;
      i += 5;
    } else if (next !== undefined && '"\\/bfnrt'.includes(next)) i++;
    else return kind === "InvalidEscapeCharacter" ? i : null;
  }
  return null;
}

/** Parses strict JSON; returns the value and a tree, or the first problem with its position. */
export function parseJson(input: string): ParsedJson | JsonProblem {
  // The byte order mark (RFC 8259 §8.1 allows ignoring one) is gone already: every reader decodes
  // with TextDecoder, which takes it off. A U+FEFF still here is a second one, and not JSON.
  const text = input;
  if (text.charCodeAt(0) === 0xfeff)
    return {
      code: "json.syntax_error",
      message: "a second byte order mark (U+FEFF) after the first is not JSON",
      position: { line: 1, column: 1 },
    };
  const lines = new LineIndex(input);
  const tooDeep = (offset: number): JsonProblem => ({
    code: "json.max_depth",
    message: `nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
    position: lines.position(offset),
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Too deep wins over a syntax error, wherever each is; and jsonc-parser recurses.
    const deep = depthExceededAt(text);
    if (deep >= 0) return tooDeep(deep);
    const errors: ParseError[] = [];
    parseTree(text, errors, { disallowComments: true, allowTrailingComma: false });
    // Only the first error is reported: after it, jsonc-parser's recovery produces cascades.
    const first = errors[0];
    if (!first)
      return { code: "json.syntax_error", message: "invalid JSON", position: { line: 1, column: 1 } };
    const at = inString(text, first);
    const breaks = at !== null && printParseErrorCode(first.error) === "UnexpectedEndOfString";
    return {
      code: "json.syntax_error",
      message: breaks ? (MESSAGES.InvalidCharacter as string) : describe(text, first),
      position: lines.position(at ?? first.offset),
    };
  }
  const deep = parsedDepthExceededAt(text, value);
  if (deep >= 0) return tooDeep(deep);
  let tree: Node | undefined | null = null;
  const getTree = () => {
    if (tree === null) tree = parseTree(text, [], { disallowComments: true });
    return tree;
  };
  return { value, tree: getTree, lines };
}

export function isJsonProblem(r: ParsedJson | JsonProblem): r is JsonProblem {
  return (r as JsonProblem).code !== undefined;
}

/** Each object node's members by name, built on first lookup. */
const memberIndex = new WeakMap<Node, Map<string, Node>>();

/**
 * An object node's members by name; the last duplicate wins, as in JSON.parse. Indexed once per
 * object: a finding per member of an object of a million members looked each name up by a scan of
 * all of them (2026-11-29: quadratic, a 14 MB document failing `additionalProperties` ran past the
 * step's time limit).
 */
function membersOf(node: Node): Map<string, Node> {
  let index = memberIndex.get(node);
  if (!index) {
    index = new Map();
    for (const prop of node.children ?? []) {
      const name = prop.children?.[0]?.value;
      if (typeof name === "string") index.set(name, prop);
    }
    memberIndex.set(node, index);
  }
  return index;
}

/**
 * Offset for a JSON Pointer: the value's start, or with `key` the property name's start.
 * Falls back to the deepest existing ancestor (e.g. for a missing property).
 */
export function jsonPointerOffset(tree: Node | undefined, pointer: string, key = false): number | null {
  if (!tree) return null;
  let node: Node = tree;
  let keyNode: Node | undefined;
  for (const seg of pointerSegments(pointer)) {
    let next: Node | undefined;
    keyNode = undefined;
    if (node.type === "object") {
      const prop = membersOf(node).get(seg);
      next = prop?.children?.[1];
      keyNode = prop?.children?.[0];
    } else if (node.type === "array" && /^\d+$/.test(seg)) {
      next = node.children?.[Number(seg)];
    }
    if (!next) return node.offset;
    node = next;
  }
  return key && keyNode ? keyNode.offset : node.offset;
}

/**
 * Duplicate object keys (legal per RFC 8259 but almost always a mistake), in document order, each
 * with the JSON Pointer of the member it names (the value the last one gives).
 */
export function duplicateKeys(
  text: string,
  limit: number,
): Array<{ key: string; offset: number; path: string }> {
  const out: Array<{ key: string; offset: number; path: string }> = [];
  const stack: Array<Set<string>> = [];
  // Streaming visit: no tree is built, so large files stay cheap.
  visit(
    text,
    {
      onObjectBegin: () => {
        stack.push(new Set());
      },
      onObjectEnd: () => {
        stack.pop();
      },
      onObjectProperty: (key, offset, _length, _line, _column, pathOf) => {
        const seen = stack[stack.length - 1];
        if (seen?.has(key) && out.length < limit) {
          // The containing object's path is only built for a duplicate.
          const path = [...pathOf(), key].reduce<string>((p, seg) => pointerJoin(p, seg), "");
          out.push({ key, offset, path });
        }
        seen?.add(key);
      },
    },
    { disallowComments: true },
  );
  return out;
}
