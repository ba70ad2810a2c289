// Where the start tag of an element named by libxml2's XPath is in the text. libxml2 gives
// validity errors a line but no column, and the first start tag of that name on the line is the
// wrong one when the element repeats there (minified XML: /a/b[2] was given b[1]'s column). One
// scan of the text names each element as libxml2's xmlGetNodePath does and keeps the offsets of
// the paths asked for.

/** A path with every element step indexed ("/a/b" → "/a[1]/b[1]"), or null if it is not elements only. */
export function elementPath(xpath: string): string | null {
  if (!xpath.startsWith("/")) return null;
  const steps = xpath.slice(1).split("/");
  const out: string[] = [];
  for (const step of steps) {
    const m = /^((?:[\w.-]+:)?[\w.-]+|\*)(?:\[(\d+)\])?$/.exec(step);
    if (!m) return null;
    out.push(`${m[1]}[${m[2] ?? "1"}]`);
  }
  return `/${out.join("/")}`;
}

interface Frame {
  /** null when no wanted path goes through this element. */
  path: string | null;
  /** A non-empty default namespace is in scope: libxml2 names such elements "*". */
  defaultNs: boolean;
  /** Element children seen so far, all of them and by libxml2's sibling key. */
  total: number;
  counts: Map<string, number>;
}

const NAME = /[^\s/>]+/y;
const ATTRIBUTE = /\s*([^\s=/>]+)\s*=\s*(["'])/y;
const TAG_END = /\s*(\/?)>/y;

/** Offset just past `end`, searched from `from`; the text's length when it never comes. */
function past(text: string, end: string, from: number): number {
  const at = text.indexOf(end, from);
  return at < 0 ? text.length : at + end.length;
}

/** Offset past a DOCTYPE declaration: its internal subset and quoted strings may hold '>'. */
function pastDoctype(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") i = past(text, c, i + 1) - 1;
    else if (c === "[") depth++;
    else if (c === "]") depth--;
    else if (c === ">" && depth <= 0) return i + 1;
  }
  return text.length;
}

/**
 * Offsets of the start tags of the `wanted` paths (as elementPath writes them). The text must be
 * well-formed (libxml2 has parsed it) and declare no entities: an entity's replacement text could
 * hold elements the scan does not see, so the caller does not ask then.
 */
export function startTagOffsets(text: string, wanted: ReadonlySet<string>): Map<string, number> {
  const found = new Map<string, number>();
  const through = new Set<string>();
  for (const w of wanted)
    for (let at = w.lastIndexOf("/"); at > 0; at = w.lastIndexOf("/", at - 1)) through.add(w.slice(0, at));
  const stack: Frame[] = [{ path: "", defaultNs: false, total: 0, counts: new Map() }];
  let i = 0;
  while (found.size < wanted.size) {
    const lt = text.indexOf("<", i);
    if (lt < 0) break;
    if (text.startsWith("<!--", lt)) i = past(text, "-->", lt + 4);
    else if (text.startsWith("<![CDATA[", lt)) i = past(text, "]]>", lt + 9);
    else if (text.startsWith("<?", lt)) i = past(text, "?>", lt + 2);
    else if (text.startsWith("<!", lt)) i = pastDoctype(text, lt + 2);
    else if (text[lt + 1] === "/") {
      stack.pop();
      i = past(text, ">", lt + 2);
    } else {
      NAME.lastIndex = lt + 1;
      const name = NAME.exec(text)?.[0] ?? "";
      // Attributes: only a default namespace declaration matters; quoted values may hold '>'.
      let j = lt + 1 + name.length;
      let xmlns: string | undefined;
      for (;;) {
        ATTRIBUTE.lastIndex = j;
        const a = ATTRIBUTE.exec(text);
        if (!a) break;
        const close = past(text, a[2], ATTRIBUTE.lastIndex);
        if (a[1] === "xmlns") xmlns = text.slice(ATTRIBUTE.lastIndex, close - 1);
        j = close;
      }
      TAG_END.lastIndex = j;
      const selfClosing = TAG_END.exec(text)?.[1] === "/";
      i = past(text, ">", j);
      const parent = stack[stack.length - 1];
      const colon = name.indexOf(":");
      const prefix = colon > 0 ? name.slice(0, colon) : null;
      const defaultNs = xmlns === undefined ? parent.defaultNs : xmlns !== "";
      // Inside an element no wanted path goes through, nothing needs a name: only the nesting.
      let path: string | null = null;
      if (parent.path !== null) {
        // xmlGetNodePath: "prefix:name"; "*" in a default namespace, counted among all element
        // siblings; else the name, counted among siblings of that name in no namespace.
        const generic = prefix === null && defaultNs;
        const key = generic ? "" : prefix !== null ? name : `:${name}`;
        const index = generic ? parent.total + 1 : (parent.counts.get(key) ?? 0) + 1;
        parent.total++;
        if (!generic) parent.counts.set(key, index);
        path = `${parent.path}/${generic ? "*" : name}[${index}]`;
        if (wanted.has(path)) found.set(path, lt);
        else if (!through.has(path)) path = null;
      }
      if (!selfClosing) stack.push({ path, defaultNs, total: 0, counts: new Map() });
    }
  }
  return found;
}
