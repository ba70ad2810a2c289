// A Schematron schema as the evaluator needs it: includes spliced in, abstract patterns
// instantiated (`is-a` + `param`), abstract rules copied where `extends` names them (at most
// MAX_EXTENDS_EXPANSION items in all, counted before copying), phases,
// lets and diagnostics collected. Every problem is a SchemaProblem with its line.
import type { Severity } from "../types.ts";
import {
  children,
  Includes,
  isSch,
  type Located,
  parseDoc,
  problem,
  resolveHref,
  type SchElement,
  SchemaProblem,
  where,
} from "./source.ts";

/** Message content: literal text, `sch:value-of select`, `sch:name path` (null: the context). */
export type Part = string | { select: string } | { name: string | null };

export interface Let {
  name: string;
  value: string;
  where: string;
}

export interface Check {
  kind: "assert" | "report";
  id: string | null;
  test: string;
  message: Part[];
  /** The referenced sch:diagnostic contents, in order. */
  diagnostics: Part[][];
  severity: Severity;
  /** Expression for the node a finding is about (ISO 2016 `subject`); null: the context node. */
  subject: string | null;
  where: string;
}

export interface Rule {
  context: string;
  lets: Let[];
  checks: Check[];
  where: string;
}

export interface Pattern {
  id: string | null;
  lets: Let[];
  rules: Rule[];
}

export interface Phase {
  id: string;
  active: string[];
  lets: Let[];
}

export interface Schematron {
  queryBinding: string;
  namespaces: Record<string, string>;
  lets: Let[];
  patterns: Pattern[];
  phases: Record<string, Phase>;
  defaultPhase: string | null;
}

/** xslt/xpath: XPath 1.0 expressions, evaluated by the XPath 3.1 engine (docs/validators.md). */
export const QUERY_BINDINGS = ["xslt", "xslt2", "xslt3", "xpath", "xpath2", "xpath3", "xpath31"];

/** role or flag → severity; anything else (a role like "BR") leaves the default, error. */
export function severityOf(...words: (string | null)[]): Severity {
  for (const w of words) {
    switch (w?.trim().toLowerCase()) {
      case "fatal":
      case "error":
        return "error";
      case "warning":
      case "warn":
        return "warning";
      case "information":
      case "info":
        return "info";
    }
  }
  return "error";
}

const XSL = "http://www.w3.org/1999/XSL/Transform";

// Anywhere in the schema (an xsl:key in a pattern, an xsl:value-of in a message): ignoring one
// would run the schema without what its author wrote.
const xslProblem = (c: Located) =>
  problem(c, `xsl:${c.el.localName} is not supported: Assay evaluates the XPath of the schema, not XSLT`);

type Subst = (s: string) => string;
const same: Subst = (s) => s;

/** `is-a` parameters: `$name` replaced by its value, longest names first, whole names only. */
function substitution(params: Map<string, string>): Subst {
  if (params.size === 0) return same;
  const names = [...params.keys()].sort((a, b) => b.length - a.length);
  const escaped = names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const re = new RegExp(`\\$(${escaped.join("|")})(?![\\w.\\-\\u00B7\\u0300-\\u036F\\u203F\\u2040])`, "g");
  return (s) => s.replace(re, (_, name: string) => params.get(name) ?? "");
}

/**
 * Most lets, checks and sch:extends the rules of one schema may hold once every `extends` is
 * expanded (docs/limits.md). Each `extends` copies the abstract rule it names, so rules extending
 * several abstract rules that extend several others grow exponentially: counted before copying,
 * so a schema past it is refused at save without being expanded.
 */
export const MAX_EXTENDS_EXPANSION = 10_000;

class Builder {
  readonly includes: Includes;
  /** Lets, checks and extends of an abstract rule (by `extends` key) once expanded. */
  readonly expandedSizes = new Map<string, number>();
  /** Items `extends` has copied so far, over the whole schema (is-a instances included). */
  expandedTotal = 0;
  readonly abstractPatterns = new Map<string, Located>();
  readonly abstractRules = new Map<string, Located>();
  readonly diagnostics = new Map<string, Located>();
  readonly namespaces: Record<string, string> = {};

  constructor(includes: Record<string, string>) {
    this.includes = new Includes(includes);
  }

  kids(n: Located, name?: string): Located[] {
    const all = [...children(n, this.includes)];
    for (const c of all) if (c.el.namespaceURI === XSL) throw xslProblem(c);
    return all.filter((c) => isSch(c.el, name));
  }

  /** Abstract patterns, abstract rules, diagnostics and namespaces: anything may refer to them. */
  collect(schema: Located): void {
    for (const c of this.kids(schema)) {
      const name = c.el.localName;
      if (name === "ns") {
        const prefix = c.el.getAttribute("prefix");
        const uri = c.el.getAttribute("uri");
        if (!prefix || uri === null) throw problem(c, "sch:ns needs a prefix and a uri");
        this.namespaces[prefix] = uri;
      } else if (name === "pattern") {
        const id = c.el.getAttribute("id");
        if (c.el.getAttribute("abstract") === "true") {
          if (!id) throw problem(c, "an abstract pattern needs an id");
          this.abstractPatterns.set(id, c);
        }
        for (const r of this.kids(c, "rule")) {
          if (r.el.getAttribute("abstract") !== "true") continue;
          const rid = r.el.getAttribute("id");
          if (!rid) throw problem(r, "an abstract rule needs an id");
          this.abstractRules.set(rid, r);
        }
      } else if (name === "diagnostics") {
        for (const d of this.kids(c, "diagnostic")) {
          const id = d.el.getAttribute("id");
          if (!id) throw problem(d, "sch:diagnostic needs an id");
          this.diagnostics.set(id, d);
        }
      }
    }
  }

  lets(n: Located, subst: Subst): Let[] {
    return this.kids(n, "let").map((l) => this.letOf(l, subst));
  }

  letOf(l: Located, subst: Subst): Let {
    const name = l.el.getAttribute("name");
    const value = l.el.getAttribute("value");
    if (!name) throw problem(l, "sch:let needs a name");
    if (value === null)
      throw problem(l, `sch:let "${name}" needs a value attribute (element content is not supported)`);
    return { name, value: subst(value), where: where(l) };
  }

  pattern(p: Located): Pattern {
    const isA = p.el.getAttribute("is-a");
    if (!isA) return { id: p.el.getAttribute("id"), lets: this.lets(p, same), rules: this.rules(p, same) };
    const abstract = this.abstractPatterns.get(isA);
    if (!abstract) throw problem(p, `is-a="${isA}" names no abstract pattern`);
    const params = new Map<string, string>();
    for (const param of this.kids(p, "param")) {
      const name = param.el.getAttribute("name");
      if (!name) throw problem(param, "sch:param needs a name");
      params.set(name, param.el.getAttribute("value") ?? "");
    }
    const subst = substitution(params);
    return {
      id: p.el.getAttribute("id"),
      lets: this.lets(abstract, subst),
      rules: this.rules(abstract, subst),
    };
  }

  rules(p: Located, subst: Subst): Rule[] {
    const out: Rule[] = [];
    for (const r of this.kids(p, "rule")) {
      if (r.el.getAttribute("abstract") === "true") continue;
      const context = r.el.getAttribute("context");
      if (!context?.trim()) throw problem(r, "sch:rule needs a context");
      const body = this.ruleBody(r, subst, []);
      out.push({ context: subst(context), ...body, where: where(r) });
    }
    return out;
  }

  /** Lets and checks of a rule, `extends` expanded in place. */
  ruleBody(r: Located, subst: Subst, seen: string[]): { lets: Let[]; checks: Check[] } {
    const lets: Let[] = [];
    const checks: Check[] = [];
    const ruleSeverity = [r.el.getAttribute("role"), r.el.getAttribute("flag")].map((s) =>
      s ? subst(s) : s,
    );
    const ruleSubject = r.el.getAttribute("subject");
    for (const c of this.kids(r)) {
      const name = c.el.localName;
      if (name === "let") lets.push(this.letOf(c, subst));
      else if (name === "assert" || name === "report")
        checks.push(this.check(c, subst, ruleSeverity, ruleSubject));
      else if (name === "extends") {
        const target = this.extended(c, seen);
        if (seen.length === 0) {
          // Counted (linear, memoised) before anything is copied; nested extends are inside it.
          this.expandedTotal += 1 + this.expandedSize(target.located, [target.key]);
          if (this.expandedTotal > MAX_EXTENDS_EXPANSION)
            throw problem(
              c,
              `sch:extends ${extendsName(c)} would expand the rules of the schema past ${MAX_EXTENDS_EXPANSION} lets, checks and extends: Assay copies an abstract rule once for each sch:extends that reaches it`,
            );
        }
        const body = this.ruleBody(target.located, subst, [...seen, target.key]);
        lets.push(...body.lets);
        checks.push(...body.checks);
      }
    }
    return { lets, checks };
  }

  /** Lets, checks and extends `r` holds with its own extends expanded; cycles throw as in ruleBody. */
  expandedSize(r: Located, seen: string[]): number {
    const key = seen[seen.length - 1];
    const known = this.expandedSizes.get(key);
    if (known !== undefined) return known;
    let size = 0;
    for (const c of this.kids(r)) {
      const name = c.el.localName;
      if (name === "let" || name === "assert" || name === "report") size += 1;
      else if (name === "extends") {
        const target = this.extended(c, seen);
        size += 1 + this.expandedSize(target.located, [...seen, target.key]);
      }
      // Past the bound already: the caller refuses; no need for the exact (maybe huge) count.
      if (size > MAX_EXTENDS_EXPANSION) break;
    }
    this.expandedSizes.set(key, size);
    return size;
  }

  extended(c: Located, seen: string[]): { located: Located; key: string } {
    const ruleId = c.el.getAttribute("rule");
    const href = c.el.getAttribute("href");
    if (ruleId) {
      const located = this.abstractRules.get(ruleId);
      if (!located) throw problem(c, `extends rule="${ruleId}", which names no abstract rule`);
      if (seen.includes(ruleId)) throw problem(c, `extends rule="${ruleId}" again (a cycle)`);
      return { located, key: ruleId };
    }
    if (href) {
      const target = this.includes.target(c, href, c.chain ?? []);
      // Distinct from any rule id, whatever the href.
      const key = `href ${resolveHref(c.doc.href, href)}`;
      if (seen.includes(key)) throw problem(c, `extends href="${href}" again (a cycle)`);
      return { located: target, key };
    }
    throw problem(c, "sch:extends needs a rule or an href");
  }

  check(c: Located, subst: Subst, ruleSeverity: (string | null)[], ruleSubject: string | null): Check {
    const test = c.el.getAttribute("test");
    if (!test?.trim()) throw problem(c, `sch:${c.el.localName} needs a test`);
    const attr = (name: string) => {
      const v = c.el.getAttribute(name);
      return v === null ? null : subst(v);
    };
    const diagnostics = (c.el.getAttribute("diagnostics") ?? "")
      .split(/\s+/)
      .filter(Boolean)
      .map((id: string) => {
        const d = this.diagnostics.get(id);
        if (!d) throw problem(c, `diagnostics="${id}" names no sch:diagnostic`);
        return this.parts(d, subst);
      });
    const subject = attr("subject") ?? (ruleSubject === null ? null : subst(ruleSubject));
    return {
      kind: c.el.localName as Check["kind"],
      id: c.el.getAttribute("id"),
      test: subst(test),
      message: this.parts(c, subst),
      diagnostics,
      severity: severityOf(attr("role"), attr("flag"), ...ruleSeverity),
      subject,
      where: where(c),
    };
  }

  /** Mixed content → parts; sch:emph, sch:dir, sch:span and foreign elements give their content. */
  parts(n: Located, subst: Subst): Part[] {
    const out: Part[] = [];
    for (const node of Array.from(n.el.childNodes)) {
      if (node.nodeType === 3 || node.nodeType === 4) out.push(node.data ?? "");
      if (node.nodeType !== 1) continue;
      const el = node as SchElement;
      const child = { el, doc: n.doc, chain: n.chain };
      if (el.namespaceURI === XSL) throw xslProblem(child);
      if (isSch(el, "value-of")) {
        const select = el.getAttribute("select");
        if (!select?.trim()) throw problem(child, "sch:value-of needs a select");
        out.push({ select: subst(select) });
      } else if (isSch(el, "name")) {
        const path = el.getAttribute("path");
        out.push({ name: path ? subst(path) : null });
      } else out.push(...this.parts(child, subst));
    }
    return out;
  }
}

const extendsName = (c: Located) => {
  const rule = c.el.getAttribute("rule");
  return rule ? `rule="${rule}"` : `href="${c.el.getAttribute("href")}"`;
};

/** Builds the schema; throws SchemaProblem (with the line) for the first problem met. */
export function buildSchema(text: string, includes: Record<string, string> = {}): Schematron {
  const doc = parseDoc(text, null);
  const root: Located = { el: doc.root, doc };
  if (!isSch(doc.root, "schema"))
    throw problem(
      root,
      `the root element must be sch:schema in the ISO namespace ${'"http://purl.oclc.org/dsdl/schematron"'}`,
    );
  const queryBinding = (doc.root.getAttribute("queryBinding") ?? "xslt").trim().toLowerCase();
  if (!QUERY_BINDINGS.includes(queryBinding))
    throw problem(
      root,
      `queryBinding "${queryBinding}" is not supported (supported: ${QUERY_BINDINGS.join(", ")})`,
    );
  const b = new Builder(includes);
  for (const c of children(root, b.includes)) if (c.el.namespaceURI === XSL) throw xslProblem(c);
  b.collect(root);
  const patterns = b.kids(root, "pattern").filter((p) => p.el.getAttribute("abstract") !== "true");
  const phases: Record<string, Phase> = {};
  const patternIds = new Set(patterns.map((p) => p.el.getAttribute("id")).filter(Boolean));
  for (const ph of b.kids(root, "phase")) {
    const id = ph.el.getAttribute("id");
    if (!id) throw problem(ph, "sch:phase needs an id");
    const active = b.kids(ph, "active").map((a) => {
      const pid = a.el.getAttribute("pattern") ?? "";
      if (!patternIds.has(pid))
        throw problem(a, `sch:active names the pattern "${pid}", which does not exist`);
      return pid;
    });
    phases[id] = { id, active, lets: b.lets(ph, same) };
  }
  const defaultPhase = doc.root.getAttribute("defaultPhase");
  if (defaultPhase && defaultPhase !== "#ALL" && !Object.hasOwn(phases, defaultPhase))
    throw problem(root, `defaultPhase "${defaultPhase}" names no sch:phase`);
  return {
    queryBinding,
    namespaces: b.namespaces,
    lets: b.lets(root, same),
    patterns: patterns.map((p) => b.pattern(p)),
    phases,
    defaultPhase: defaultPhase || null,
  };
}

export { SchemaProblem };
