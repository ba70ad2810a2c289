// Duplicate mapping keys as YAML 1.2 defines them (§3.2.1.3, Node Comparison): "two scalars are
// equal only when their tags and canonical forms are equal". yaml's own check compares the JS
// values, so `1` (!!int) and `1.0` (!!float) collide; `a` and "a" (both !!str) and `1` and `0x1`
// (both !!int 1) are the real duplicates. yaml keeps no resolved tag on an untagged scalar, so
// each scalar tag's resolver is wrapped to record it on the node it produces.
import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  Scalar,
  type ParsedNode,
  type Tags,
  type YAMLMap,
} from "yaml";
import { headOf } from "../../lib/text.ts";
import { appendAll } from "../../lib/arrays.ts";

const RESOLVED = Symbol("resolved YAML tag");
const STR = "tag:yaml.org,2002:str";
const INT = "tag:yaml.org,2002:int";

type Marked = Scalar & { [RESOLVED]?: string };
type ScalarTagLike = { tag: string; collection?: string; resolve: (...args: never[]) => unknown };

const FLOAT = "tag:yaml.org,2002:float";
const CORE_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
const CORE_INT = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;

/** A resolver for one core tag written out (`!!int x`); never used for untagged scalars. */
const explicit = (tag: string, resolve: (str: string) => unknown, what: string) => ({
  tag,
  default: false,
  resolve(str: string, onError: (message: string) => void): unknown {
    const v = resolve(str);
    if (v !== undefined) return v;
    onError(`not ${what}: ${JSON.stringify(headOf(str, 40))}`);
    return str;
  },
});

/**
 * The core schema's tags written out, read as YAML 1.2's core schema reads them (§10.3.2). yaml's
 * own tags take only what a plain scalar would resolve to: `!!float 1` answered "Unresolved tag"
 * and kept the string "1" (1 is a float's content all the same). Content the tag cannot have
 * (`!!int abc`, `!!bool maybe`, `!!null 1`) is an error: such a node cannot be resolved, and
 * yaml's "Unresolved tag" warning let json_schema check the string "abc" as if valid.
 */
const explicitCoreTags = [
  explicit(
    FLOAT,
    (str) => {
      if (/^[-+]?\.(?:inf|Inf|INF)$/.test(str)) return str.startsWith("-") ? -Infinity : Infinity;
      if (/^\.(?:nan|NaN|NAN)$/.test(str)) return Number.NaN;
      return CORE_FLOAT.test(str) ? Number.parseFloat(str) : undefined;
    },
    "a float",
  ),
  explicit(
    INT,
    (str) => {
      if (!CORE_INT.test(str)) return undefined;
      if (str.startsWith("0o")) return Number.parseInt(str.slice(2), 8);
      return str.startsWith("0x") ? Number.parseInt(str.slice(2), 16) : Number.parseInt(str, 10);
    },
    "an integer",
  ),
  explicit(
    "tag:yaml.org,2002:bool",
    (str) =>
      /^(?:true|True|TRUE)$/.test(str) ? true : /^(?:false|False|FALSE)$/.test(str) ? false : undefined,
    "a boolean",
  ),
  // undefined is "no null"; the null it reads is made a node by markResolvedTags.
  explicit(
    "tag:yaml.org,2002:null",
    (str) => (/^(?:~|null|Null|NULL)?$/.test(str) ? null : undefined),
    "a null",
  ),
];

/** `customTags` for yaml: the schema's scalar tags, each marking the scalars it resolves. */
export function markResolvedTags(tags: Tags): Tags {
  return [...tags, ...(explicitCoreTags as unknown as Tags)].map((t) => {
    if (typeof t === "string" || (t as ScalarTagLike).collection) return t;
    const tag = t as unknown as ScalarTagLike;
    const resolve = tag.resolve as (...args: unknown[]) => unknown;
    return {
      ...tag,
      resolve: (...args: unknown[]) => {
        const r = resolve(...args);
        const node: Marked = isScalar(r) ? r : new Scalar(r);
        node[RESOLVED] = tag.tag;
        return node;
      },
    };
  }) as Tags;
}

function tagOf(node: Marked): string {
  // An explicit tag wins; "!" (non-specific) on a scalar is !!str, as is an unmarked scalar
  // (quoted and block scalars resolve to the plain string type, which has no resolver to wrap).
  const explicit = node.tag && node.tag !== "!" ? node.tag : undefined;
  return explicit ?? node[RESOLVED] ?? STR;
}

/**
 * The exact value of an !!int the parser rounded (beyond 2^53, or Infinity beyond a double), from
 * its source (decimal, 0o or 0x); null for any other scalar.
 */
export function exactInteger(node: Scalar): bigint | null {
  const v = node.value;
  if (typeof v !== "number" || Number.isSafeInteger(v) || tagOf(node) !== INT) return null;
  return typeof node.source === "string" && CORE_INT.test(node.source) ? BigInt(node.source) : null;
}

/** The canonical value of a scalar of the given tag, comparable with Object.is. */
function canonical(node: Marked, tag: string): unknown {
  const v = node.value;
  // An integer beyond 2^53 was rounded by the parser: its source says which one it is.
  const exact = tag === INT ? exactInteger(node) : null;
  if (exact !== null) return exact.toString();
  if (typeof v === "number" || typeof v === "bigint") return tag === INT ? BigInt(v).toString() : v;
  if (v instanceof Date) return v.getTime();
  if (v instanceof Uint8Array) return Array.from(v).join(",");
  return v;
}

/**
 * A scalar key's identity: equal strings for keys YAML calls the same node (tag and canonical
 * form), so a mapping's duplicates are found with a Set, in linear time. yaml's own check
 * compares each key with every earlier one: a mapping of 20,000 keys took 40–60 s.
 */
function keyIdentity(node: Marked): string {
  const tag = tagOf(node);
  const v = canonical(node, tag);
  const text = typeof v === "number" && Object.is(v, -0) ? "-0" : String(v);
  return `${tag}\u0000${typeof v}\u0000${text}`;
}

/**
 * Offsets of the keys that repeat an earlier key of the same mapping, in every mapping of the
 * document (iterative: the depth is bounded before, but a loop needs no bound). Only scalar keys
 * can repeat: a collection as a key is its own node. An alias as a key is its anchor's node.
 */
export function duplicateKeyOffsets(doc: Document.Parsed): number[] {
  const out: number[] = [];
  /** Mappings with an alias as a key: checked again below with each alias as its anchor's node. */
  const aliased: YAMLMap[] = [];
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = pair.key as ParsedNode | null;
        if (isScalar(key)) {
          const id = keyIdentity(key as Marked);
          if (seen.has(id)) out.push(key.range?.[0] ?? 0);
          else seen.add(id);
        } else if (isAlias(key) && aliased[aliased.length - 1] !== node) aliased.push(node);
        stack.push(pair.key, pair.value);
      }
    } else if (isSeq(node)) appendAll(stack, node.items);
  }
  // `&a k: 1` then `*a : 2`: the alias is the node k itself, a duplicate as plainly as `k: 2`
  // (and `? &a [1]` then `? *a`: the same collection node twice). Rare, so the aliases are
  // resolved (one more walk) only when a key is one.
  if (aliased.length > 0) {
    const reported = new Set(out);
    const target = aliasTargets(doc);
    for (const map of aliased) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        const node = isAlias(key) ? target.get(key) : key;
        if (!isScalar(node) && !isMap(node) && !isSeq(node)) continue;
        const id = isScalar(node) ? keyIdentity(node as Marked) : node;
        const at = (key as ParsedNode).range?.[0] ?? 0;
        if (!seen.has(id)) seen.add(id);
        else if (!reported.has(at)) {
          reported.add(at);
          out.push(at);
        }
      }
    }
  }
  return out.sort((a, b) => a - b);
}

/**
 * The JSON property name a scalar key gets when the document becomes JSON (yaml's toJS): "" for
 * null (`~`, `null`), "true" and "false", a number's shortest form (`0x10` is "16", `1.0` is "1").
 * The value and the pointer that finds a key again both name keys here: a pointer that named a
 * null key "null" found nothing, and a finding under it was placed at the document's start.
 */
export function jsonKeyName(node: Scalar): string {
  const v = node.value;
  if (v === null) return "";
  // An integer key beyond 2^53 keeps its digits (yamlValue gives toJS the exact value): named
  // by its double, 9007199254740993 was "9007199254740992" and 1e23's digits were "1e+23". So
  // does an anchored one, and an alias key to one (yaml.ts keyCollision says how).
  const exact = exactInteger(node);
  return exact === null ? String(v) : exact.toString();
}

const targets = new WeakMap<Document.Parsed, Map<unknown, unknown>>();

/**
 * The node each alias of a document stands for (undefined: no anchor before it), found once per
 * document in one walk and kept. yaml's Alias.resolve walks the whole document on every call.
 * yaml resolves an alias to the last node with that anchor before it in document order (anchors
 * before their contents, keys before values), as this walk meets them.
 */
export function aliasTargets(doc: Document.Parsed): Map<unknown, unknown> {
  const known = targets.get(doc);
  if (known) return known;
  const found = new Map<unknown, unknown>();
  const anchors = new Map<string, unknown>();
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isAlias(node)) {
      found.set(node, anchors.get(node.source));
      continue;
    }
    const anchor = (node as { anchor?: string } | null)?.anchor;
    if (anchor) anchors.set(anchor, node);
    // Children in reverse: popped in document order.
    if (isMap(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i].value, node.items[i].key);
    } else if (isSeq(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]);
    }
  }
  targets.set(doc, found);
  return found;
}
