// The submitted document as the XPath engine sees it: a slimdom tree built by saxes with the
// source range of every element, so a finding can name the line and column of its node. libxml2
// has checked the bytes first (src/validators/shared/xml.ts: well-formedness, depth, entity
// amplification), so this second parse only ever sees a bounded, well-formed document.
import { sync } from "slimdom-sax-parser";
import { LineIndex, type Position } from "../shared/position.ts";
import type { NameKey } from "./match.ts";

/** What we read from slimdom nodes (slimdom-sax-parser adds `position` to elements and text). */
export interface XNode {
  nodeType: number;
  nodeName: string;
  parentNode: XNode | null;
  ownerElement?: XNode | null;
  childNodes: ArrayLike<XNode>;
  attributes?: ArrayLike<XNode>;
  namespaceURI?: string | null;
  localName?: string;
  position?: { start: number; end: number };
}

const XMLNS = "http://www.w3.org/2000/xmlns/";

/** The slimdom calls mergeCdata makes (slimdom's DOM, beyond what XNode reads). */
interface MutableNode extends XNode {
  data?: string;
  ownerDocument?: { createTextNode(data: string): MutableNode } | null;
  insertBefore(node: MutableNode, before: MutableNode): void;
  removeChild(node: MutableNode): void;
}

/**
 * CDATA sections joined to the text around them: XPath's data model has no CDATA node, and
 * adjacent text is one text node (XPath 1.0 §5.7), so `<p>AT<![CDATA[&]]>T</p>` has one text()
 * equal to "AT&T" (slimdom kept three nodes: count(text()) was 3 and text() = 'AT&T' false).
 * The joined node spans its parts' source range.
 */
function mergeCdata(root: XNode): void {
  const stack = [root as MutableNode];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const kids = Array.from(node.childNodes) as MutableNode[];
    for (let i = 0; i < kids.length; ) {
      if (kids[i]!.nodeType === ELEMENT) stack.push(kids[i]!);
      if (kids[i]!.nodeType !== TEXT && kids[i]!.nodeType !== CDATA) {
        i++;
        continue;
      }
      let j = i;
      while (j < kids.length && (kids[j]!.nodeType === TEXT || kids[j]!.nodeType === CDATA)) j++;
      const run = kids.slice(i, j);
      if (run.some((k) => k.nodeType === CDATA)) {
        const doc = (node.nodeType === DOCUMENT ? node : node.ownerDocument) as MutableNode["ownerDocument"];
        const joined = doc!.createTextNode(run.map((k) => k.data ?? "").join(""));
        const first = run[0]!.position;
        const last = run[run.length - 1]!.position;
        if (first && last) joined.position = { start: first.start, end: last.end };
        node.insertBefore(joined, run[0]!);
        for (const k of run) node.removeChild(k);
      }
      i = j;
    }
  }
}

const ELEMENT = 1;
const ATTRIBUTE = 2;
const TEXT = 3;
const CDATA = 4;
const DOCUMENT = 9;

export class SourceDocument {
  readonly root: XNode;
  readonly #lines: LineIndex;
  /** Built on first use: elements and attributes by "{ns}local" ("@{ns}local"), in document order. */
  #names: Map<string, XNode[]> | null = null;
  #elements: XNode[] = [];
  #attributes: XNode[] = [];
  readonly #order = new Map<XNode, number>();

  /**
   * `additionalEntities`: the document's own entities (entities.ts). `positioned` false for a text
   * that is not what the client sent (libxml2's expanded tree): no node then has a line.
   */
  constructor(
    readonly text: string,
    additionalEntities: Record<string, string> = {},
    readonly positioned = true,
  ) {
    this.#lines = new LineIndex(text);
    this.root = sync(text, { position: true, additionalEntities }) as unknown as XNode;
    if (text.includes("<![CDATA[")) mergeCdata(this.root);
  }

  #index(): Map<string, XNode[]> {
    if (this.#names) return this.#names;
    const names = new Map<string, XNode[]>();
    const add = (key: string, node: XNode) => {
      const list = names.get(key);
      if (list) list.push(node);
      else names.set(key, [node]);
      this.#order.set(node, this.#order.size);
    };
    // Iterative: libxml2 bounds the depth, but a loop needs no bound at all.
    const stack: XNode[] = [this.root];
    while (stack.length > 0) {
      const node = stack.pop() as XNode;
      if (node.nodeType === ELEMENT) {
        add(`{${node.namespaceURI ?? ""}}${node.localName}`, node);
        this.#elements.push(node);
        for (const a of Array.from(node.attributes ?? [])) {
          if (a.namespaceURI === XMLNS) continue; // namespace declarations are not attributes in XPath
          add(`@{${a.namespaceURI ?? ""}}${a.localName}`, a);
          this.#attributes.push(a);
        }
      } else this.#order.set(node, this.#order.size);
      const kids = node.childNodes;
      for (let i = kids.length - 1; i >= 0; i--) if (kids[i].nodeType === ELEMENT) stack.push(kids[i]);
    }
    this.#names = names;
    return names;
  }

  /** Elements (or attributes) with this name, in document order. */
  named(key: NameKey): XNode[] {
    const names = this.#index();
    if (key.ns !== "*" && key.local !== "*")
      return names.get(`${key.attribute ? "@" : ""}{${key.ns}}${key.local}`) ?? [];
    const all = key.attribute ? this.#attributes : this.#elements;
    return all.filter(
      (n) =>
        (key.ns === "*" || (n.namespaceURI ?? "") === key.ns) &&
        (key.local === "*" || n.localName === key.local),
    );
  }

  /** Sorts nodes into document order without duplicates (nodes from named() or queries). */
  inOrder(nodes: XNode[]): XNode[] {
    this.#index();
    const rank = (n: XNode) => this.#order.get(n) ?? Number.MAX_SAFE_INTEGER;
    return [...new Set(nodes)].sort((a, b) => rank(a) - rank(b));
  }

  /**
   * slimdom-sax-parser 1.5.3 puts the start of an element that follows the prolog (a declaration,
   * comment or PI) one character past its `<`: step back to the `<`.
   */
  #tagStart(start: number, node: XNode | null | undefined): number {
    if (node?.nodeType !== ELEMENT || this.text[start] === "<") return start;
    const lt = this.text.lastIndexOf("<", start);
    return lt >= 0 ? lt : start;
  }

  /** 1-based line and column (UTF-16 units) of a node's start; an attribute's name in its tag. */
  positionOf(node: XNode): Position | null {
    if (!this.positioned) return null;
    if (node.nodeType === ATTRIBUTE) {
      const owner = node.ownerElement;
      const range = owner?.position;
      if (!range) return null;
      const start = this.#tagStart(range.start, owner);
      const at = attributeOffset(this.text.slice(start, range.end), node.nodeName);
      return this.#lines.position(start + (at ?? 0));
    }
    if (node.nodeType === DOCUMENT) return { line: 1, column: 1 };
    if (node.position) return this.#lines.position(this.#tagStart(node.position.start, node));
    return node.parentNode ? this.positionOf(node.parentNode) : null;
  }
}

/**
 * Where the attribute `name` starts in a start tag (`<el a="…" name='…'>`), or null. The tag is
 * read attribute by attribute, values skipped whole: a search for ` name=` found it inside an
 * earlier attribute's value (`<a note='x id="1"' id="2">`).
 */
export function attributeOffset(tag: string, name: string): number | null {
  let i = 1;
  while (i < tag.length && !/[\s/>]/.test(tag[i]!)) i++; // the element's name
  for (;;) {
    while (i < tag.length && /\s/.test(tag[i]!)) i++;
    if (i >= tag.length || tag[i] === ">" || tag[i] === "/") return null;
    const nameStart = i;
    while (i < tag.length && !/[\s=]/.test(tag[i]!)) i++;
    const found = tag.slice(nameStart, i);
    while (i < tag.length && /\s/.test(tag[i]!)) i++;
    if (tag[i] !== "=") return null;
    i++;
    while (i < tag.length && /\s/.test(tag[i]!)) i++;
    const quote = tag[i];
    if (quote !== '"' && quote !== "'") return null;
    const close = tag.indexOf(quote, i + 1);
    if (close < 0) return null;
    if (found === name) return nameStart;
    i = close + 1;
  }
}

/**
 * The node's XPath with the document's own prefixes, `[n]` only where siblings share the name
 * (the form libxml2 gives the xml_schema validator's findings): `/Invoice/cac:InvoiceLine[2]/@id`.
 */
export function pathOf(node: XNode): string {
  if (node.nodeType === DOCUMENT) return "/";
  if (node.nodeType === ATTRIBUTE) {
    const owner = node.ownerElement;
    return `${owner ? pathOf(owner) : ""}/@${node.nodeName}`;
  }
  const steps: string[] = [];
  let n: XNode | null = node;
  while (n && n.nodeType !== DOCUMENT) {
    steps.push(step(n));
    n = n.parentNode;
  }
  return `/${steps.reverse().join("/")}`;
}

/**
 * Each parent's children's steps, made once per parent: counting a node's siblings for each
 * finding made a pattern that fails on every one of 20,000 siblings quadratic (400 million sibling
 * visits). Documents are not changed while a step runs.
 */
const stepsOf = new WeakMap<XNode, Map<XNode, string>>();

function step(node: XNode): string {
  const parent = node.parentNode;
  if (!parent) return stepName(node);
  let steps = stepsOf.get(parent);
  if (!steps) {
    steps = childSteps(parent);
    stepsOf.set(parent, steps);
  }
  return steps.get(node) ?? stepName(node);
}

const stepName = (node: XNode) => (node.nodeType === ELEMENT ? node.nodeName : kindTest(node.nodeType));

/** `name`, or `name[n]` where siblings of the same kind share the name. */
function childSteps(parent: XNode): Map<XNode, string> {
  const children = Array.from(parent.childNodes);
  const key = (n: XNode) => `${n.nodeType} ${n.nodeName}`;
  const total = new Map<string, number>();
  for (const c of children) total.set(key(c), (total.get(key(c)) ?? 0) + 1);
  const seen = new Map<string, number>();
  const steps = new Map<XNode, string>();
  for (const c of children) {
    const k = key(c);
    const n = (seen.get(k) ?? 0) + 1;
    seen.set(k, n);
    steps.set(c, total.get(k)! > 1 ? `${stepName(c)}[${n}]` : stepName(c));
  }
  return steps;
}

function kindTest(nodeType: number): string {
  switch (nodeType) {
    case 3:
    case 4:
      return "text()";
    case 7:
      return "processing-instruction()";
    case 8:
      return "comment()";
    default:
      return "node()";
  }
}
