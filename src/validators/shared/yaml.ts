// YAML 1.2 via `yaml`: every document of a stream, errors with offsets, duplicate keys as errors,
// and node ranges to map a JSON Pointer back to line/column.
import {
  type Alias,
  Composer,
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  Lexer,
  type Node,
  type Pair,
  Parser,
  type CST,
  type YAMLMap,
} from "yaml";
import { MAX_JSON_DEPTH, MAX_YAML_ALIAS_COUNT } from "../limits.ts";
import { pointerJoin, pointerSegments } from "./findings.ts";
import { LineIndex, type Position } from "./position.ts";
import {
  aliasTargets,
  duplicateKeyOffsets,
  exactInteger,
  jsonKeyName,
  markResolvedTags,
} from "./yaml-keys.ts";
import { headOf } from "../../lib/text.ts";
import { appendAll } from "../../lib/arrays.ts";
import { maxYamlBytes } from "../yaml-limit.ts";

export interface YamlProblem {
  code:
    | "yaml.syntax_error"
    | "yaml.max_depth"
    | "yaml.alias_limit"
    | "yaml.key_collision"
    | "yaml.key_not_scalar"
    | "yaml.too_large";
  message: string;
  position: Position | null;
  /** JSON Pointer of where the problem is, when it is inside the value (an unresolved alias). */
  path?: string;
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

/** Thrown out of the token stream when collections nest deeper than MAX_JSON_DEPTH. */
class TooDeep {
  constructor(readonly offset: number) {}
}

const COLLECTIONS = new Set(["block-map", "block-seq", "flow-collection"]);

/**
 * yaml's tokens with the nesting bounded: the parser keeps the collections it is inside on a
 * stack, and we follow that stack after every lexeme (only its top changes), so nesting deeper
 * than `max` stops the parse at the collection that goes too deep, before anything recurses.
 * yaml's composer and toJS recurse once per level: a few thousand levels overflow the stack, and
 * yaml reports the overflow as an error with the engine's message, at a column that depends on
 * how much stack the caller had left.
 */
function* boundedTokens(text: string, max: number, seen: Seen): Generator<CST.Token> {
  const parser = new Parser();
  const open: CST.Token[] = [];
  let collections = 0;
  const follow = () => {
    const stack = parser.stack;
    let same = Math.min(open.length, stack.length);
    while (same > 0 && open[same - 1] !== stack[same - 1]) same--;
    while (open.length > same) if (COLLECTIONS.has((open.pop() as CST.Token).type)) collections--;
    for (let i = same; i < stack.length; i++) {
      open.push(stack[i]);
      if (COLLECTIONS.has(stack[i].type) && ++collections > max) throw new TooDeep(stack[i].offset);
    }
  };
  let scalar = false;
  /** The directives since the last document: each must be followed by one (`---`). */
  let pending: CST.Directive[] = [];
  const top = (token: CST.Token) => {
    if (token.type === "document") pending = [];
    else if (token.type === "directive") {
      if (/^%YAML(?:[ \t]|$)/.test(token.source) && pending.some((d) => /^%YAML(?:[ \t]|$)/.test(d.source)))
        seen.misplaced.push({ directive: token, why: "twice" });
      pending.push(token);
      seen.directives.push(token);
    }
  };
  for (const lexeme of new Lexer().lex(text)) {
    // A byte order mark the lexer takes as one: at the start of the stream or of a document.
    if (lexeme === "\ufeff" && !scalar) seen.boms.push(parser.offset);
    scalar = lexeme === "\x1f"; // the lexer's mark before a scalar's text
    // Only complete top-level tokens come out here (a document once it ends): few per stream.
    for (const token of parser.next(lexeme)) {
      top(token);
      yield token;
    }
    follow();
  }
  for (const token of parser.end()) {
    top(token);
    yield token;
  }
  for (const directive of pending) seen.misplaced.push({ directive, why: "no document" });
}

/**
 * Each document with its own directives only. YAML 1.2 gives a document the directives written
 * before its own `---` (the YAML test suite's QLJ7: a %TAG handle defined for the first document
 * only is an error in the next); YAML 1.1 gave a document without directives the previous one's
 * ("parsed using the same settings as the previous document"), and yaml does so after a
 * `%YAML 1.1` directive: `%TAG !e! …` held for every later document, and `%TAG !! …` turned a
 * later document's `!!str` into an unknown tag. Every document is read as YAML 1.2 here
 * (versionProblem), so the stream's directives are reset after each document: once yaml has made
 * the document (its own copy of them), before the next token.
 */
function* ownDirectives(tokens: Iterable<CST.Token>, composer: Composer): Generator<CST.Token> {
  for (const token of tokens) {
    yield token;
    if (token.type !== "document") continue;
    const directives = composer.streamInfo().directives;
    // As a 1.2 stream does after each document: the default version and tags.
    directives.yaml = { explicit: false, version: "1.2" };
    directives.atDocument();
  }
}

/** What boundedTokens saw on the way that yaml keeps nowhere. */
interface Seen {
  directives: CST.Directive[];
  /** Directives YAML 1.2 does not allow where they are (§6.8, §9.2): see misplacedProblem. */
  misplaced: Array<{ directive: CST.Directive; why: "twice" | "no document" }>;
  /** Offsets of the byte order marks that stand where YAML allows one, in order. */
  boms: number[];
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: exactly what YAML 1.2 §5.1 excludes
const UNPRINTABLE = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFEFF\uFFFE\uFFFF]/g;

/**
 * The first character YAML does not allow in a stream, with how many more there are: C0 controls
 * but tab, LF and CR, DEL, C1 controls but NEL, U+FFFE and U+FFFF (YAML 1.2 §5.1, c-printable),
 * and a byte order mark anywhere but where a document may start (§5.2). yaml took them all as
 * content. One regular expression over the text: no cost to speak of on a large document.
 */
function unprintableProblem(text: string, boms: number[], lines: LineIndex): YamlProblem | null {
  let first = -1;
  let more = 0;
  let b = 0;
  UNPRINTABLE.lastIndex = 0;
  for (let m = UNPRINTABLE.exec(text); m !== null; m = UNPRINTABLE.exec(text)) {
    while (b < boms.length && boms[b] < m.index) b++;
    if (boms[b] === m.index) continue;
    if (first < 0) first = m.index;
    else more++;
  }
  if (first < 0) return null;
  const code = text.charCodeAt(first);
  const hex = code.toString(16).toUpperCase().padStart(4, "0");
  const escaped = code < 0x100 ? `\\x${hex.slice(2)}` : `\\u${hex}`;
  const message =
    code === 0xfeff
      ? "a byte order mark (U+FEFF) is allowed only at the start of a document (YAML 1.2 §5.2)"
      : `the character U+${hex} is not allowed in YAML (YAML 1.2 §5.1): write it as the escape "${escaped}" in a double-quoted scalar`;
  return {
    code: "yaml.syntax_error",
    message: more > 0 ? `${message}; ${more} more such character${more > 1 ? "s" : ""} follow` : message,
    position: lines.position(first),
    severity: "error",
  };
}

/**
 * Every document is read as YAML 1.2, core schema, whatever its %YAML directive says (yaml read
 * a `%YAML 1.1` document with 1.1's types: `yes` true, `0777` octal, `<<` merging, `!!omap` an
 * ordered map that JSON Schema took for an empty object). A version other than 1.2 is said:
 * a lower or higher minor version is a warning, a higher major version an error, as YAML 1.2.2
 * §6.8.1 asks ("should be rejected with an appropriate error message").
 */
function versionProblem(directive: CST.Directive, lines: LineIndex): YamlProblem | null {
  const m = /^%YAML[ \t]+((\d+)\.(\d+))$/.exec(directive.source.trim());
  if (!m || (m[2] === "1" && m[3] === "2")) return null;
  const position = lines.position(directive.offset + directive.source.indexOf(m[1], 5));
  if (Number(m[2]) >= 2)
    return {
      code: "yaml.syntax_error",
      message: `YAML ${m[1]} is not read: a YAML 1.2 reader rejects a higher major version (YAML 1.2.2 §6.8.1)`,
      position,
      severity: "error",
    };
  const older = Number(m[2]) < 1 || Number(m[3]) < 2;
  return {
    code: "yaml.syntax_error",
    message: older
      ? `YAML ${m[1]} is read as YAML 1.2 (core schema): yes, no, on and off are strings, 0777 is the integer 777, << is an ordinary key`
      : `YAML ${m[1]} is read as YAML 1.2 (core schema)`,
    position,
    severity: "warning",
  };
}

/**
 * A directive where YAML 1.2 allows none, which yaml read without an error (the YAML test
 * suite's SF5V and 9MMA): a second `%YAML` for one document (§6.8.1: "It is an error to specify
 * more than one YAML directive for the same document"), and directives with no document after
 * them (§9.2: directives belong to an explicit document, which starts with `---`).
 */
function misplacedProblem(
  directive: CST.Directive,
  why: "twice" | "no document",
  lines: LineIndex,
): YamlProblem {
  return {
    code: "yaml.syntax_error",
    message:
      why === "twice"
        ? "a document has one %YAML directive at most (YAML 1.2 §6.8.1)"
        : "a directive must be followed by a document that starts with --- (YAML 1.2 §9.2)",
    position: lines.position(directive.offset),
    severity: "error",
  };
}

/**
 * Drops the documents yaml makes of a `...` with no document before it (the YAML test suite's
 * M7A3, HWV9, QT73): without `---` and without any content, such a line only ends the stream's
 * previous document or its comments (YAML 1.2 §9.1.4: a bare document has content), so the
 * stream has no document there. An explicit empty document (`---` alone) is a null one and stays.
 */
function dropEmptyBareDocuments(docs: Document.Parsed[]): void {
  let kept = 0;
  for (const doc of docs) {
    const contents = doc.contents;
    const empty =
      !doc.directives.docStart &&
      doc.errors.length === 0 &&
      doc.warnings.length === 0 &&
      isScalar(contents) &&
      contents.value === null &&
      contents.source === "" &&
      contents.tag === undefined &&
      contents.anchor === undefined;
    if (!empty) docs[kept++] = doc;
  }
  docs.length = kept;
}

/** A RangeError inside yaml (a stack overflow): never its message, always our finding. */
const tooDeepProblem = (position: Position | null): YamlProblem => ({
  code: "yaml.max_depth",
  message: `nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
  position,
  severity: "error",
});

/**
 * A lone CR as the LF it stands for. YAML 1.2 (§5.4) breaks lines at CR LF, CR and LF, and a
 * processor normalises each to LF in content; yaml knows only the first two, so a file with
 * classic Mac line ends was one line and a syntax error. Same length: offsets, and the lines
 * LineIndex counts on the original text (lone CR included), are unchanged.
 */
const lineFeeds = (text: string) => (text.includes("\r") ? text.replace(/\r(?!\n)/g, "\n") : text);

export function parseYaml(text: string): ParsedYaml {
  const lines = new LineIndex(text);
  const problems: YamlProblem[] = [];
  // Before anything is parsed: the reader's memory is ~175 times the document (yaml-limit.ts).
  const max = maxYamlBytes();
  const size = max > 0 && text.length > max / 3 ? Buffer.byteLength(text, "utf8") : 0;
  if (size > max)
    return {
      docs: [],
      problems: [
        {
          code: "yaml.too_large",
          message: `the YAML document is ${size} bytes; YAML is read up to ${max} bytes (ASSAY_MAX_YAML_BYTES): reading it takes about 175 bytes of memory per byte`,
          position: { line: 1, column: 1 },
          severity: "error",
        },
      ],
      lines,
    };
  const docs: Document.Parsed[] = [];
  const seen: Seen = { directives: [], misplaced: [], boms: [] };
  try {
    // parseAllDocuments, with the depth bounded before yaml's composer recurses.
    // Keys are duplicates when tag and canonical value agree (yaml-keys.ts), not the JS values;
    // checked below in linear time, not by yaml (which compares every pair of keys).
    // YAML 1.1's !!omap, !!set, !!timestamp, !!binary stay what they are written as (a sequence,
    // a mapping, a string): resolved, they were a Map, Set, Date or bytes, which JSON Schema took
    // for an empty object (docs/validators.md).
    // `schema: "core"` for every document: yaml takes a `%YAML 1.1` directive for its 1.1 schema.
    // `logLevel: "silent"`: at its default ("warn") toJS told the process of every key that is a
    // sequence or a mapping (process.emitWarning, a line on the server's stderr per submission);
    // what the reader finds is said in findings only (the syntax step accepts such a key,
    // json_schema and assertions give yaml.key_not_scalar).
    const composer = new Composer({
      uniqueKeys: false,
      customTags: markResolvedTags,
      resolveKnownTags: false,
      schema: "core",
      logLevel: "silent",
    });
    const tokens = boundedTokens(lineFeeds(text), MAX_JSON_DEPTH, seen);
    for (const doc of composer.compose(ownDirectives(tokens, composer))) docs.push(doc);
  } catch (e) {
    // Too deep: one finding at the collection that goes too deep. A stack overflow all the same
    // is yaml.max_depth in our words; anything else yaml throws is a finding too, never a crash.
    if (e instanceof TooDeep) problems.push(tooDeepProblem(lines.position(e.offset)));
    else if (e instanceof RangeError) problems.push(tooDeepProblem(null));
    else
      problems.push({
        code: "yaml.syntax_error",
        message: (e as Error).message,
        position: null,
        severity: "error",
      });
    return { docs: [], problems, lines };
  }
  const unprintable = unprintableProblem(text, seen.boms, lines);
  if (unprintable) problems.push(unprintable);
  for (const directive of seen.directives) {
    const problem = versionProblem(directive, lines);
    if (problem) problems.push(problem);
  }
  for (const m of seen.misplaced) problems.push(misplacedProblem(m.directive, m.why, lines));
  dropEmptyBareDocuments(docs);
  for (const doc of docs) {
    for (const [list, severity] of [
      [doc.errors, "error"],
      [doc.warnings, "warning"],
    ] as const) {
      const found = [...list];
      if (severity === "error")
        for (const pos of duplicateKeyOffsets(doc))
          found.push({
            code: "DUPLICATE_KEY",
            message: "Map keys must be unique",
            pos: [pos, pos],
          } as (typeof list)[number]);
      for (const err of found) {
        // Said by versionProblem, in our words (and an error for 2.0).
        if (err.code === "BAD_DIRECTIVE" && /^Unsupported YAML version \d+\.\d+$/.test(err.message)) continue;
        // yaml catches a stack overflow while composing a collection and reports it with the
        // engine's message; the depth bound above should prevent it, this is the backstop.
        if (err.code === "RESOURCE_EXHAUSTION") {
          problems.push(tooDeepProblem(lines.position(err.pos[0])));
          continue;
        }
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

/**
 * The first alias with no anchor before it (as yaml resolves them), or the first node nested
 * deeper than MAX_JSON_DEPTH in the value the document builds, or null (iterative walk). An alias
 * stands for its anchor's node, so it reaches as deep as its own depth plus that node's height:
 * without counting it, a few aliases of aliases, each adding 500 literal levels, build data
 * thousands of levels deep. Heights are computed once per node (post order: an anchor always
 * comes before its aliases); an alias inside its own anchor's node builds a cycle, data without
 * end, and is too deep as well.
 */
function aliasOrDepthProblem(doc: Document.Parsed): { offset: number; unresolved?: Alias } | null {
  /** Height (levels of collections, a scalar 0) of each finished anchored node. */
  const heights = new Map<unknown, number>();
  const anchors = new Map<string, unknown>();
  /** Collections being walked, with the greatest height of their finished children so far. */
  const open: { node: unknown; anchored: boolean; children: number }[] = [];
  const finish = (height: number) => {
    const parent = open[open.length - 1];
    if (parent) parent.children = Math.max(parent.children, height);
  };
  // [node, depth] to enter, or null: leave the innermost open collection.
  const stack: Array<[unknown, number] | null> = [[doc.contents, 1]];
  while (stack.length > 0) {
    const top = stack.pop() as [unknown, number] | null;
    if (top === null) {
      const done = open.pop() as (typeof open)[number];
      if (done.anchored) heights.set(done.node, done.children + 1);
      finish(done.children + 1);
      continue;
    }
    const [node, depth] = top;
    const anchor = (node as { anchor?: string } | null)?.anchor;
    if (anchor) anchors.set(anchor, node);
    if (isAlias(node)) {
      // yaml resolves an alias to the last anchor of that name before it, as this walk's order does.
      const target = anchors.get(node.source);
      if (target === undefined) return { offset: node.range?.[0] ?? 0, unresolved: node };
      const height = heights.get(target);
      if (height === undefined || depth + height - 1 > MAX_JSON_DEPTH)
        return { offset: node.range?.[0] ?? 0 };
      finish(height);
    } else if (isMap(node) || isSeq(node)) {
      if (depth > MAX_JSON_DEPTH) return { offset: node.range?.[0] ?? 0 };
      open.push({ node, anchored: Boolean(anchor), children: 0 });
      stack.push(null);
      // Children in reverse: popped in document order, so anchors are met before their aliases.
      const items = node.items as unknown[];
      for (let i = items.length - 1; i >= 0; i--) {
        if (isMap(node)) {
          const pair = items[i] as { key: unknown; value: unknown };
          stack.push([pair.value, depth + 1], [pair.key, depth + 1]);
        } else stack.push([items[i], depth + 1]);
      }
    } else {
      if (anchor) heights.set(node, 0);
      finish(0);
    }
  }
  return null;
}

/**
 * The JSON Pointer of a node in the value the document builds: a key, or a node inside a key, has
 * its mapping's pointer. Iterative, in document order; only asked for a finding.
 */
function yamlPointerTo(doc: Document.Parsed, target: unknown, text: string): string {
  const stack: Array<{ node: unknown; pointer: string }> = [{ node: doc.contents, pointer: "" }];
  while (stack.length > 0) {
    const { node, pointer } = stack.pop() as (typeof stack)[number];
    if (node === target) return pointer;
    if (isMap(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) {
        const { key, value } = node.items[i];
        stack.push(
          { node: value, pointer: pointerJoin(pointer, keyName(doc, key, text)) },
          { node: key, pointer },
        );
      }
    } else if (isSeq(node)) {
      for (let i = node.items.length - 1; i >= 0; i--)
        stack.push({ node: node.items[i], pointer: pointerJoin(pointer, i) });
    }
  }
  return "";
}

/** A scalar key's JSON property name (yaml-keys.ts jsonKeyName), an alias's as its anchor's. */
function scalarKeyName(doc: Document.Parsed, key: unknown): string | null {
  const node = isAlias(key) ? aliasTargets(doc).get(key) : key;
  return isScalar(node) ? jsonKeyName(node) : null;
}

/** A key's name in a pointer: a collection key (no JSON name) as written. */
function keyName(doc: Document.Parsed, key: unknown, text: string): string {
  const range = (key as Node | null)?.range;
  return scalarKeyName(doc, key) ?? (range ? text.slice(range[0], range[1]).trim() : "");
}

/**
 * Builds the plain value of a document, or a problem (alias bomb, unresolved alias, depth, keys
 * that are one JSON property name).
 * `exactIntegers`: an !!int beyond 2^53 (decimal, 0o, 0x) that fits 64 bits is a bigint, not its
 * rounded neighbour (CEL's `int`; JSON Schema's validators take numbers). Integer keys keep their
 * digits either way (keyCollision).
 */
export function yamlValue(
  doc: Document.Parsed,
  lines: LineIndex,
  exactIntegers = false,
  /** false: the keys need not be JSON's (the syntax step checks YAML as YAML). */
  jsonKeys = true,
): { value: unknown } | YamlProblem {
  const found = aliasOrDepthProblem(doc);
  // Found here, at the alias: yaml's toJS threw it with no place, and it was put at 1:1.
  if (found?.unresolved) {
    return {
      code: "yaml.syntax_error",
      message: `Unresolved alias (the anchor must be set before the alias): ${found.unresolved.source}`,
      position: lines.position(found.offset),
      path: yamlPointerTo(doc, found.unresolved, lines.text),
      severity: "error",
    };
  }
  if (found) {
    return {
      code: "yaml.max_depth",
      message: `nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`,
      position: lines.position(found.offset),
      severity: "error",
    };
  }
  // Integers first: a key's JSON name is the value toJS will see (yaml-keys.ts jsonKeyName).
  if (exactIntegers) exactBigIntegers(doc);
  const collision = jsonKeys ? keyCollision(doc, lines.text) : null;
  if (collision && "first" in collision) {
    return {
      code: "yaml.key_collision",
      message: `the keys ${collision.first} and ${collision.second} are different YAML keys but one JSON property name: the data was not checked`,
      position: lines.position(collision.offset),
      severity: "error",
    };
  }
  if (collision) {
    return {
      code: "yaml.key_not_scalar",
      message: `the key ${collision.key} is a ${collision.kind}, which has no JSON property name: the data was not checked`,
      position: lines.position(collision.offset),
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

/**
 * The first key of a mapping that is a sequence or a mapping (JSON names a property only by a
 * string), or whose JSON property name an earlier, different key of the same mapping already has: `1` (an int) and `"1"` (a string), `true` and `"true"`, `null` and `""`.
 * YAML keeps them apart (yaml-keys.ts), JSON cannot: yaml's toJS kept the last value silently, so
 * a rule saw `{"1": "b"}` for `{1: a, "1": b}`. Iterative; the depth is bounded before.
 */
function keyCollision(
  doc: Document.Parsed,
  text: string,
):
  | { first: string; second: string; offset: number }
  | { key: string; kind: "sequence" | "mapping"; offset: number }
  | null {
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isAlias(node)) {
      // An alias as a value: its anchor's node as a value, whatever that node is named as a key.
      const target = aliasTargets(doc).get(node);
      if (isScalar(target) && exactInteger(target) !== null) convertsTo(node, () => target.value);
    } else if (isMap(node)) {
      const names = new Map<string, Node>();
      for (const pair of node.items) {
        const written = pair.key as Node | null;
        // An alias key is its anchor's node, named as that node is (`*a` for `&a 1` is "1").
        const key = isAlias(written) ? (aliasTargets(doc).get(written) as Node | undefined) : written;
        if (isScalar(key) && written) {
          const name = jsonKeyName(key);
          // toJS names the key by its value: the exact integer, not its rounded double.
          const exact = typeof key.value === "number" ? exactInteger(key) : null;
          if (exact !== null && written === key && !key.anchor) key.value = exact;
          else if (exact !== null) convertsTo(written, () => exact);
          const earlier = names.get(name);
          if (earlier?.range && written.range) {
            // As written (`1`, `"1"`, `*a`): their values print alike.
            const src = (n: Node) => headOf(text.slice(n.range![0], n.range![1]).trim(), 40);
            return { first: src(earlier), second: src(written), offset: written.range[0] };
          }
          names.set(name, written);
        } else if ((isSeq(key) || isMap(key)) && written?.range) {
          // `? [a, b]: 1`: yaml's toJS named it "[ a, b ]", a name no JSON document could have.
          const shown = text.slice(written.range[0], written.range[1]).trim();
          const cut = shown.length > 40 ? `${headOf(shown, 39)}…` : shown;
          return { key: cut, kind: isSeq(key) ? "sequence" : "mapping", offset: written.range[0] };
        } else if (written && !isAlias(written)) stack.push(written);
        stack.push(pair.value);
      }
    } else if (isSeq(node)) for (const item of node.items) stack.push(item);
  }
  return null;
}

/**
 * What yaml's toJS makes of this node: `value()` instead of what it would. An anchored node's
 * value is shared: toJS keeps what the node gave for its aliases, and an alias gives that. So an
 * integer key beyond 2^53 that is anchored, or an alias key to one, is named by its exact value
 * only through this (its value left a double, json_schema taking no bigint values), and each
 * alias of it as a value then gives the node's value, not the key's name: `&a 9007199254740993: x`
 * is the property "9007199254740993", and `b: *a` is the double 9007199254740992 for json_schema.
 */
function convertsTo(node: Node, value: () => unknown): void {
  const own = (node as { toJSON: (arg: unknown, ctx: unknown) => unknown }).toJSON;
  Object.defineProperty(node, "toJSON", {
    configurable: true,
    value(arg: unknown, ctx: unknown) {
      own.call(node, arg, ctx); // an alias is resolved and counted (the billion-laughs guard)
      return value();
    },
  });
}

const INT64 = [-(2n ** 63n), 2n ** 63n - 1n] as const;

/** Puts back the integers the parser rounded (see yamlValue), from each scalar's source text. */
function exactBigIntegers(doc: Document.Parsed): void {
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isScalar(node)) {
      const n = exactInteger(node);
      if (n !== null && n >= INT64[0] && n <= INT64[1]) node.value = n;
    } else if (isMap(node)) {
      for (const pair of node.items) stack.push(pair.key, pair.value);
    } else if (isSeq(node)) {
      appendAll(stack, node.items);
    }
  }
}

/** Offset for a JSON Pointer into a document: the value node, or with `key` the key node. */
/** Each mapping's pairs by property name, built on first lookup (as json.ts `membersOf`). */
const pairIndex = new WeakMap<object, Map<string, Pair>>();

/** A mapping's pairs by the property name each key converts to; the last duplicate wins. */
function pairsOf(doc: Document.Parsed, node: YAMLMap): Map<string, Pair> {
  let index = pairIndex.get(node);
  if (!index) {
    index = new Map();
    for (const pair of node.items) index.set(scalarKeyName(doc, pair.key) ?? String(pair.key), pair);
    pairIndex.set(node, index);
  }
  return index;
}

export function yamlPointerOffset(doc: Document.Parsed, pointer: string, key = false): number | null {
  let node: unknown = doc.contents;
  let keyNode: Node | undefined;
  const offsetOf = (n: unknown) => ((n as Node | null)?.range ? (n as Node).range![0] : null);
  for (const seg of pointerSegments(pointer)) {
    if (isAlias(node)) node = aliasTargets(doc).get(node);
    let next: unknown;
    keyNode = undefined;
    if (isMap(node)) {
      const pair = pairsOf(doc, node).get(seg);
      next = pair?.value;
      keyNode = pair?.key as Node | undefined;
    } else if (isSeq(node) && /^\d+$/.test(seg)) next = node.items[Number(seg)];
    // A missing or null value (e.g. "key:" with nothing after it) points at the key or parent.
    if (next === undefined || next === null) return offsetOf(keyNode) ?? offsetOf(node);
    node = next;
  }
  return key && keyNode ? offsetOf(keyNode) : offsetOf(node);
}
