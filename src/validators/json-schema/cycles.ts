// Save-time check for references that loop without ever moving into the document:
// {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
// applies a, b, a, b … to the same value forever; typebox recurses until the stack overflows.
// The spec leaves such schemas undefined (2020-12 core §9.4.1: "Schemas SHOULD NOT make use of
// infinite recursive nesting like this"); Assay refuses them when the step is saved.
//
// A graph over the schema objects reachable from the root: an edge is "in place" when the target
// applies to the same value ($ref, allOf/anyOf/oneOf, not, if/then/else, dependentSchemas,
// schema-valued dependencies), and "consuming" when it applies to a member, an item or a name
// (properties, items …), which is a smaller part of a finite document. A cycle of in-place edges
// never ends; one with a consuming edge ends with the document (a tree schema). $dynamicRef and
// $recursiveRef count like $ref when they cannot be dynamic (their static target declares no
// matching dynamic anchor); a dynamic one depends on the evaluation path and is left to the run,
// where a stack overflow is a step error of our own (index.ts), not a crash.
import { isPlainObject } from "../shared/config-shape.ts";
import { ROOT_BASE } from "./refs.ts";
import { ARRAY, MAP, SINGLE } from "./walk.ts";

type Obj = Record<string, unknown>;

/** Keywords whose subschemas apply to the same value as the schema object holding them. */
const IN_PLACE_ARRAYS = ["allOf", "anyOf", "oneOf"];
const IN_PLACE_SINGLE = ["not", "if"];
/** Never applied by themselves: only through a reference. */
const DEFINITIONS = new Set(["$defs", "definitions"]);

interface Resource {
  root: Obj;
  anchors: Map<string, Obj>;
}

interface Node {
  base: string;
  /** "#/…" in the step's schema, "<uri>#/…" in a stored one: for the message. */
  label: string;
}

function esc(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

function resolve(ref: string, base: string): URL | null {
  try {
    return new URL(ref, base);
  } catch {
    return null;
  }
}

const noHash = (uri: string) => uri.split("#")[0];

class Graph {
  readonly docs = new Map<string, Resource>();
  readonly nodes = new Map<Obj, Node>();
  private readonly loaded = new Set<string>();

  constructor(private readonly context: Record<string, unknown>) {}

  /** Registers a document (the schema, or a resource of the context) and what it embeds. */
  add(root: unknown, uri: string, labelPrefix: string): void {
    if (!isPlainObject(root)) return;
    const stack: Array<{ s: unknown; base: string; pointer: string; res: Resource | undefined }> = [
      { s: root, base: uri, pointer: "", res: undefined },
    ];
    while (stack.length > 0) {
      const { s, base: parentBase, pointer, res: parentRes } = stack.pop()!;
      if (!isPlainObject(s) || this.nodes.has(s)) continue;
      let base = parentBase;
      let res = parentRes;
      const id = s.$id;
      if (typeof id === "string" && !id.startsWith("#")) {
        const u = resolve(id, base);
        if (u) base = noHash(u.href);
      }
      if (!res || base !== parentBase || pointer === "") {
        res = this.docs.get(base) ?? { root: s, anchors: new Map() };
        if (!this.docs.has(base)) this.docs.set(base, res);
      }
      if (typeof id === "string" && id.startsWith("#")) res.anchors.set(id.slice(1), s);
      for (const key of ["$anchor", "$dynamicAnchor"])
        if (typeof s[key] === "string" && !res.anchors.has(s[key] as string))
          res.anchors.set(s[key] as string, s);
      this.nodes.set(s, { base, label: `${labelPrefix}#${pointer}` });
      for (const [key, value] of Object.entries(s)) {
        const at = `${pointer}/${esc(key)}`;
        if (ARRAY.has(key) && Array.isArray(value))
          for (let i = 0; i < value.length; i++)
            stack.push({ s: value[i], base, pointer: `${at}/${i}`, res });
        else if (SINGLE.has(key)) stack.push({ s: value, base, pointer: at, res });
        else if (MAP.has(key) && isPlainObject(value))
          for (const [name, v] of Object.entries(value))
            stack.push({ s: v, base, pointer: `${at}/${esc(name)}`, res });
      }
    }
  }

  /** The document at `uri`: known, or a resource of the context registered on first use. */
  private doc(uri: string): Resource | undefined {
    const known = this.docs.get(uri);
    if (known || this.loaded.has(uri)) return known;
    this.loaded.add(uri);
    const schema = this.context[uri] ?? this.context[`${uri}#`];
    this.add(schema, uri, uri);
    return this.docs.get(uri);
  }

  /** The schema object a reference lands on statically; undefined for a boolean or nothing. */
  target(ref: string, from: Obj): Obj | undefined {
    const node = this.nodes.get(from);
    const u = node && resolve(ref, node.base);
    if (!u) return undefined;
    const doc = this.doc(noHash(u.href));
    if (!doc) return undefined;
    let fragment: string;
    try {
      fragment = decodeURIComponent(u.hash.slice(1));
    } catch {
      return undefined;
    }
    if (fragment === "") return doc.root;
    if (!fragment.startsWith("/")) return doc.anchors.get(fragment);
    let cur: unknown = doc.root;
    for (const raw of fragment.split("/").slice(1)) {
      const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      if (typeof cur !== "object" || cur === null || !Object.hasOwn(cur, seg)) return undefined;
      cur = (cur as Obj)[seg];
    }
    return isPlainObject(cur) ? cur : undefined;
  }

  /** Schema objects that apply to the same value as `s`, each with the keyword that leads there. */
  inPlace(s: Obj): Obj[] {
    const out: Obj[] = [];
    const push = (v: unknown) => {
      if (isPlainObject(v)) out.push(v);
    };
    for (const key of IN_PLACE_ARRAYS) if (Array.isArray(s[key])) (s[key] as unknown[]).forEach(push);
    for (const key of IN_PLACE_SINGLE) push(s[key]);
    if (s.if !== undefined) {
      push(s.then);
      push(s.else);
    }
    for (const key of ["dependentSchemas", "dependencies"])
      if (isPlainObject(s[key])) Object.values(s[key] as Obj).forEach(push);
    if (typeof s.$ref === "string") push(this.target(s.$ref, s));
    if (typeof s.$dynamicRef === "string") {
      const t = this.target(s.$dynamicRef, s);
      const hash = s.$dynamicRef.indexOf("#");
      // Dynamic only when the static target declares the anchor the fragment names.
      if (!(hash >= 0 && t?.$dynamicAnchor === s.$dynamicRef.slice(hash + 1))) push(t);
    }
    if (typeof s.$recursiveRef === "string") {
      const t = this.target(s.$recursiveRef, s);
      if (t?.$recursiveAnchor !== true) push(t);
    }
    return out;
  }

  /** Schema objects that apply to a member, an item or a name of the value: everything else. */
  consuming(s: Obj): Obj[] {
    const out: Obj[] = [];
    for (const [key, value] of Object.entries(s)) {
      if (DEFINITIONS.has(key) || IN_PLACE_ARRAYS.includes(key) || IN_PLACE_SINGLE.includes(key)) continue;
      if (key === "then" || key === "else" || key === "dependentSchemas" || key === "dependencies") continue;
      if (ARRAY.has(key) && Array.isArray(value)) out.push(...value.filter(isPlainObject));
      else if (SINGLE.has(key) && isPlainObject(value)) out.push(value);
      else if (MAP.has(key) && isPlainObject(value)) out.push(...Object.values(value).filter(isPlainObject));
    }
    return out;
  }
}

/**
 * A message for the first cycle of references that never moves into the document, reachable from
 * the root of a normalised schema; null when there is none. `context` holds the resources
 * references may name (meta-schemas, stored schemas), `rootUri` the URI the schema is known by.
 */
export function refCycle(
  schema: unknown,
  context: Record<string, unknown>,
  rootUri = ROOT_BASE,
): string | null {
  if (!isPlainObject(schema)) return null;
  const g = new Graph(context);
  g.add(schema, rootUri, "");
  // Every schema object the root can apply, through any edge: dead definitions are not run.
  const reachable = new Set<Obj>([schema]);
  const queue: Obj[] = [schema];
  while (queue.length > 0) {
    const s = queue.pop()!;
    for (const next of [...g.inPlace(s), ...g.consuming(s)]) {
      if (!reachable.has(next)) {
        reachable.add(next);
        queue.push(next);
      }
    }
  }
  // Depth-first over the in-place edges only (iterative): a back edge is a cycle.
  const state = new Map<Obj, "open" | "done">();
  for (const start of reachable) {
    if (state.has(start)) continue;
    const path: Array<{ s: Obj; edges: Obj[]; next: number }> = [
      { s: start, edges: g.inPlace(start), next: 0 },
    ];
    state.set(start, "open");
    while (path.length > 0) {
      const top = path[path.length - 1];
      if (top.next >= top.edges.length) {
        state.set(top.s, "done");
        path.pop();
        continue;
      }
      const t = top.edges[top.next++];
      const seen = state.get(t);
      if (seen === "done") continue;
      if (seen === "open") {
        const loop = path.slice(path.findIndex((p) => p.s === t)).map((p) => label(g, p.s));
        return (
          `${[...loop, loop[0]].join(" → ")}: these references loop back without moving into the ` +
          "document (through properties, items …), so validating would never end"
        );
      }
      state.set(t, "open");
      path.push({ s: t, edges: g.inPlace(t), next: 0 });
    }
  }
  return null;
}

function label(g: Graph, s: Obj): string {
  return g.nodes.get(s)?.label ?? "(schema)";
}
