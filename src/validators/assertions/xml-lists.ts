// Which XML elements are CEL lists. fast-xml-parser makes an element a list only when it repeats,
// so `data.order.item.all(…)` works on a two-item order and fails on a one-item order, where
// `item` is a map. A step says which elements can repeat (`xml.lists`): paths of element names
// from the root ("order/item"), or "//item" for an element of that name at any depth; or "always"
// for every element below the root. "auto" (the default) keeps the parser's guess.
import { celList, celMap } from "@bufbuild/cel";

export type XmlLists = "auto" | "always" | string[];

/** A path of xml.lists: element names from the root separated by "/", or "//" first (any depth). */
export const XML_PATH = /^(\/\/)?[^/\s]+(\/[^/\s]+)*$/;

/** Save-time check of one path; null when fine. */
export function xmlPathProblem(path: string): string | null {
  if (!XML_PATH.test(path))
    return 'a path names elements from the root, separated by "/" (order/item), or starts with "//" (//item)';
  return null;
}

/**
 * Put before an element name the parser would refuse or rename (data.ts): U+0001 is in no XML
 * name, so no other name starts with it.
 */
export const XML_NAME_ESCAPE = "\u0001";

type Matcher = (path: readonly string[]) => boolean;

function matcher(lists: XmlLists): Matcher {
  if (lists === "auto") return () => false;
  if (lists === "always") return (path) => path.length > 1;
  const exact = new Set(lists.filter((p) => !p.startsWith("//")));
  const anywhere = lists.filter((p) => p.startsWith("//")).map((p) => p.slice(2).split("/"));
  return (path) => {
    if (exact.has(path.join("/"))) return true;
    return anywhere.some(
      (tail) => tail.length <= path.length && tail.every((n, i) => n === path[path.length - tail.length + i]),
    );
  };
}

/** The parsed document as CEL values, listed elements made lists. */
export function xmlToCel(doc: unknown, lists: XmlLists): unknown {
  const isList = matcher(lists);
  const convert = (v: unknown, path: string[]): unknown => {
    if (Array.isArray(v)) return celList(v.map((x) => convert(x, path)) as never[]);
    if (v === null || typeof v !== "object") return v;
    const m = new Map<string, unknown>();
    const keys = Object.keys(v);
    const hasElements = keys.some((k) => !k.startsWith("@") && k !== "#text");
    for (const key of keys) {
      const child = (v as Record<string, unknown>)[key];
      // Whitespace between child elements is layout, not text (the parser keeps all text as is).
      if (key === "#text" && hasElements && typeof child === "string" && child.trim() === "") continue;
      // Attributes ("@id") and text ("#text") are never lists.
      if (key.startsWith("@") || key === "#text") {
        m.set(key, child);
        continue;
      }
      const name = key.startsWith(XML_NAME_ESCAPE) ? key.slice(XML_NAME_ESCAPE.length) : key;
      const childPath = [...path, name];
      const value = convert(child, childPath);
      m.set(name, !Array.isArray(child) && isList(childPath) ? celList([value as never]) : value);
    }
    return celMap(m as never);
  };
  return convert(doc, []);
}
