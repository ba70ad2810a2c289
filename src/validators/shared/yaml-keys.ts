// Duplicate mapping keys as YAML 1.2 defines them (§3.2.1.3, Node Comparison): "two scalars are
// equal only when their tags and canonical forms are equal". yaml's own check compares the JS
// values, so `1` (!!int) and `1.0` (!!float) collide; `a` and "a" (both !!str) and `1` and `0x1`
// (both !!int 1) are the real duplicates. yaml keeps no resolved tag on an untagged scalar, so
// each scalar tag's resolver is wrapped to record it on the node it produces.
import { isMap, isScalar, isSeq, Scalar, type ParsedNode, type Tags } from "yaml";
import { appendAll } from "../../lib/arrays.ts";

const RESOLVED = Symbol("resolved YAML tag");
const STR = "tag:yaml.org,2002:str";
const INT = "tag:yaml.org,2002:int";

type Marked = Scalar & { [RESOLVED]?: string };
type ScalarTagLike = { tag: string; collection?: string; resolve: (...args: never[]) => unknown };

const FLOAT = "tag:yaml.org,2002:float";
const CORE_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;

/**
 * An explicit `!!float`, as YAML 1.2's core schema reads it (§10.3.2): `!!float 1` is 1.0. yaml's
 * float tags only take what a plain scalar would resolve to a float (a dot or an exponent), so
 * it answered "Unresolved tag" and kept the string "1". Never used for untagged scalars.
 */
const explicitFloat = {
  tag: FLOAT,
  default: false,
  resolve(str: string, onError: (message: string) => void): number | string {
    if (/^[-+]?\.(?:inf|Inf|INF)$/.test(str)) return str.startsWith("-") ? -Infinity : Infinity;
    if (/^\.(?:nan|NaN|NAN)$/.test(str)) return Number.NaN;
    if (CORE_FLOAT.test(str)) return Number.parseFloat(str);
    onError(`not a float: ${JSON.stringify(str.slice(0, 40))}`);
    return str;
  },
};

/** `customTags` for yaml: the schema's scalar tags, each marking the scalars it resolves. */
export function markResolvedTags(tags: Tags): Tags {
  return [...tags, explicitFloat as unknown as Tags[number]].map((t) => {
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

/** The canonical value of a scalar of the given tag, comparable with Object.is. */
function canonical(node: Marked, tag: string): unknown {
  const v = node.value;
  // An integer beyond 2^53 was rounded by the parser: its decimal source says which one it is.
  if (tag === INT && typeof v === "number" && !Number.isSafeInteger(v)) {
    const source = typeof node.source === "string" ? node.source : "";
    if (/^[-+]?[0-9]+$/.test(source)) return BigInt(source).toString();
  }
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
 * can repeat: a collection as a key is its own node.
 */
export function duplicateKeyOffsets(contents: unknown): number[] {
  const out: number[] = [];
  const stack: unknown[] = [contents];
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
        }
        stack.push(pair.key, pair.value);
      }
    } else if (isSeq(node)) appendAll(stack, node.items);
  }
  return out.sort((a, b) => a - b);
}
