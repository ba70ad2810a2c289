// The schematron step's form: the schema, a phase selector filled from the schema's own sch:phase
// elements as the user types (parsed in the browser; the server checks everything on save), and
// the optional includes and parameters as JSON.
import { field, h, option } from "../dom.ts";
import type { StepDraft } from "./step-config.ts";

const SCH_NS = "http://purl.oclc.org/dsdl/schematron";
const mono = { class: "mono", spellcheck: "false", autocapitalize: "none" };

/** The sch:phase ids of a schema text; [] while it does not parse. */
export function phaseIds(schema: string): string[] {
  const doc = new DOMParser().parseFromString(schema, "application/xml");
  if (doc.getElementsByTagName("parsererror").length > 0) return [];
  return Array.from(doc.getElementsByTagNameNS(SCH_NS, "phase"))
    .map((p) => p.getAttribute("id") ?? "")
    .filter(Boolean);
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
