// The schematron step's form: the schema, a phase selector filled from the schema's own sch:phase
// elements as the user types (read in the browser; the server checks everything on save), and
// the optional includes and parameters as JSON.
import { field, h, option } from "../dom.ts";
import type { StepDraft } from "./step-config.ts";

const SCH_NS = "http://purl.oclc.org/dsdl/schematron";
const mono = { class: "mono", spellcheck: "false", autocapitalize: "none" };

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
/** An attribute value's character and entity references (an id may hold &amp; or &#233;). */
function attrValue(v: string): string {
  return v.replace(
    /&(?:#x([0-9a-f]+)|#([0-9]+)|([a-z]+));/gi,
    (m, hex?: string, dec?: string, name?: string) => {
      if (name) return ENTITIES[name] ?? m;
      const n = hex ? Number.parseInt(hex, 16) : Number(dec);
      return n <= 0x10ffff ? String.fromCodePoint(n) : m;
    },
  );
}
const TAG =
  /<(\/?)([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/g;
const ATTR = /([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/**
 * The sch:phase ids of a schema text, as far as it can be read while being typed. Read by a scan of
 * its tags with their namespace declarations in scope, not by DOMParser: Chromium marks a document
 * that does not parse with a parsererror element carrying an inline style, which the page's CSP
 * refuses, so every keystroke of a half-typed schema logged a CSP violation (two console errors).
 */
export function phaseIds(schema: string): string[] {
  // Comments, CDATA sections and processing instructions hold no elements.
  const text = schema.replace(
    /<!--[\s\S]*?(?:-->|$)|<!\[CDATA\[[\s\S]*?(?:\]\]>|$)|<\?[\s\S]*?(?:\?>|$)/g,
    "",
  );
  const ids: string[] = [];
  const scopes: Map<string, string>[] = [new Map()];
  for (const [, end, name, attrs, empty] of text.matchAll(TAG)) {
    if (end) {
      if (scopes.length > 1) scopes.pop();
      continue;
    }
    const scope = new Map(scopes.at(-1));
    const values = new Map<string, string>();
    for (const [, key, dq, sq] of (attrs ?? "").matchAll(ATTR)) {
      const v = attrValue(dq ?? sq ?? "");
      if (key === "xmlns") scope.set("", v);
      else if (key!.startsWith("xmlns:")) scope.set(key!.slice(6), v);
      else values.set(key!, v);
    }
    const [prefix, local] = name!.includes(":") ? name!.split(":") : ["", name!];
    const id = values.get("id");
    if (local === "phase" && scope.get(prefix!) === SCH_NS && id && !ids.includes(id)) ids.push(id);
    if (!empty) scopes.push(scope);
  }
  return ids;
}

function jsonArea(d: StepDraft, key: string, fieldPath: string): HTMLTextAreaElement {
  return h("textarea", {
    ...mono,
    rows: "4",
    "data-field": fieldPath,
    value: d.texts[key] ?? "",
    oninput: (e: Event) => (d.texts[key] = (e.target as HTMLTextAreaElement).value),
  });
}

export function schematronEditor(d: StepDraft, cp: string): HTMLElement[] {
  const c = d.config;
  const phase = h("select", {
    "data-field": `${cp}.phase`,
    onchange: (e: Event) => {
      const v = (e.target as HTMLSelectElement).value;
      if (v) c.phase = v;
      else delete c.phase;
    },
  });
  const fillPhases = () => {
    const chosen = typeof c.phase === "string" ? c.phase : "";
    const ids = phaseIds(String(c.schema ?? ""));
    // A saved phase stays listed even while the schema text is being edited.
    if (chosen && chosen !== "#ALL" && !ids.includes(chosen)) ids.unshift(chosen);
    phase.replaceChildren(
      option("", "Default (the schema's defaultPhase, else all)", chosen === ""),
      option("#ALL", "All patterns (#ALL)", chosen === "#ALL"),
      ...ids.map((id) => option(id, id, id === chosen)),
    );
  };
  const schema = h("textarea", {
    ...mono,
    rows: "14",
    "data-field": `${cp}.schema`,
    value: String(c.schema ?? ""),
    oninput: (e: Event) => {
      c.schema = (e.target as HTMLTextAreaElement).value;
      fillPhases();
    },
  });
  fillPhases();
  return [
    field("Schematron schema", schema, "An ISO Schematron sch:schema. Checked when you save."),
    field("Phase", phase, "Which sch:phase to run."),
    field(
      "Includes (JSON, optional)",
      jsonArea(d, "includes", `${cp}.includes`),
      'Documents sch:include names, by href: {"abstract/rules.sch": "<sch:pattern …"}. Nothing is fetched.',
    ),
    field(
      "Parameters (JSON, optional)",
      jsonArea(d, "parameters", `${cp}.parameters`),
      'Values for the schema\'s global sch:let variables: {"country": "DE"}.',
    ),
  ];
}
