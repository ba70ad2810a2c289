// One editor per validator kind for a step's config: JSON Schema, XSD/RelaxNG/DTD, Schematron,
// Table Schema, CEL assertions, text rules; raw JSON for anything else. Editors write into the draft
// as the user types, so re-rendering the step list (reorder, add, remove) loses nothing. Every
// control carries data-field = the path the server names in its errors (steps[i].config.schema).
import { type Child, checkbox, field, h, option } from "../dom.ts";
import { schematronEditor } from "./schematron-editor.ts";
import type { StepDraft } from "./step-config.ts";

const mono = { class: "mono", spellcheck: "false", autocapitalize: "none" };

function jsonArea(d: StepDraft, key: string, fieldPath: string, rows = 12): HTMLTextAreaElement {
  return h("textarea", {
    ...mono,
    rows: String(rows),
    "data-field": fieldPath,
    value: d.texts[key] ?? "",
    oninput: (e: Event) => (d.texts[key] = (e.target as HTMLTextAreaElement).value),
  });
}

function setOrDelete(config: Record<string, unknown>, key: string, v: unknown) {
  if (v === undefined || v === "" || v === null) delete config[key];
  else config[key] = v;
}

function numberInput(
  d: StepDraft,
  key: string,
  fieldPath: string,
  attrs: Record<string, string> = {},
): HTMLInputElement {
  const v = d.config[key];
  return h("input", {
    type: "number",
    ...attrs,
    "data-field": fieldPath,
    value: typeof v === "number" ? String(v) : "",
    oninput: (e: Event) => {
      const raw = (e.target as HTMLInputElement).value;
      setOrDelete(d.config, key, raw === "" ? undefined : Number(raw));
    },
  });
}

function rulesEditor(d: StepDraft, p: string): HTMLElement {
  const box = h("div", { class: "rules", "data-field": `${p}.rules` });
  const rules = () => (Array.isArray(d.config.rules) ? (d.config.rules as Record<string, string>[]) : []);
  const draw = () => {
    const list = rules();
    const text = (
      r: Record<string, string>,
      k: string,
      label: string,
      i: number,
      hint?: string,
      required = true,
    ) => {
      const el = h("input", {
        ...mono,
        value: r[k] ?? "",
        required,
        "data-field": `${p}.rules[${i}].${k}`,
        oninput: (e: Event) => setOrDelete(r, k, (e.target as HTMLInputElement).value),
      });
      return field(label, el, hint);
    };
    box.replaceChildren(
      ...list.map((r, i) => {
        const sev = h(
          "select",
          {
            "data-field": `${p}.rules[${i}].severity`,
            value: r.severity ?? "error",
            onchange: (e: Event) => (r.severity = (e.target as HTMLSelectElement).value),
          },
          ["error", "warning", "info"].map((s) => option(s, s)),
        );
        return h(
          "fieldset",
          { class: "rule" },
          h("legend", null, `Rule ${i + 1}`),
          text(r, "id", "Rule id", i),
          text(r, "expr", "Expression (CEL)", i, "Must be true for the data to pass, e.g. data.total >= 0"),
          text(r, "message", "Message", i),
          field("Severity", sev),
          text(r, "when", "Only when (CEL, optional)", i, undefined, false),
          h(
            "button",
            {
              type: "button",
              class: "button small secondary",
              onclick: () => {
                d.config.rules = list.filter((x) => x !== r);
                draw();
              },
            },
            `Remove rule ${i + 1}`,
          ),
        );
      }),
      h(
        "button",
        {
          type: "button",
          class: "button small secondary",
          onclick: () => {
            d.config.rules = [...list, { id: `rule-${list.length + 1}`, expr: "", message: "" }];
            draw();
          },
        },
        "Add rule",
      ),
    );
  };
  draw();
  return box;
}

/** xml.lists of an assertions step as one text: "always", or paths separated by commas. */
function xmlListsInput(d: StepDraft, cp: string): HTMLElement {
  const xml = (d.config.xml ?? {}) as { lists?: unknown };
  const shown = Array.isArray(xml.lists) ? xml.lists.join(", ") : xml.lists === "always" ? "always" : "";
  const input = h("input", {
    ...mono,
    value: shown,
    placeholder: "invoice/line, //note",
    "data-field": `${cp}.xml.lists`,
    oninput: (e: Event) => {
      const raw = (e.target as HTMLInputElement).value.trim();
      const lists =
        raw === "" ? undefined : raw === "always" ? "always" : raw.split(",").map((x) => x.trim());
      setOrDelete(d.config, "xml", lists === undefined ? undefined : { lists });
    },
  });
  return field(
    "XML: elements that are lists",
    input,
    "For XML submissions: paths of elements that can repeat (a list even when one occurs), or always.",
  );
}

/** The validator-specific part of a step's form. `p` is the step's field path, e.g. steps[0]. */
export function configEditor(d: StepDraft, p: string): Child {
  const c = d.config;
  const cp = `${p}.config`;
  switch (d.validator) {
    case "syntax":
      return h(
        "p",
        { class: "hint" },
        "Checks that the submission is well-formed (with line and column). No settings.",
      );
    case "json_schema": {
      const draft = h(
        "select",
        {
          "data-field": `${cp}.draft`,
          value: String(c.draft ?? ""),
          onchange: (e: Event) => setOrDelete(c, "draft", (e.target as HTMLSelectElement).value),
        },
        option("", "From $schema, else 2020-12"),
        ["4", "6", "7", "2019-09", "2020-12"].map((v) => option(v, `Draft ${v}`)),
      );
      const formats = checkbox("Treat “format” as an assertion", {
        checked: c.assert_formats !== false,
        onchange: (e: Event) =>
          setOrDelete(c, "assert_formats", (e.target as HTMLInputElement).checked ? undefined : false),
      });
      return [
        field(
          "JSON Schema",
          jsonArea(d, "schema", `${cp}.schema`, 14),
          "The schema the submission (JSON or YAML) must satisfy. Checked when you save.",
        ),
        field("Draft", draft),
        formats,
      ];
    }
    case "xml_schema": {
      const kind = h(
        "select",
        {
          "data-field": `${cp}.schema_type`,
          value: String(c.schema_type ?? "xsd"),
          onchange: (e: Event) => (c.schema_type = (e.target as HTMLSelectElement).value),
        },
        option("xsd", "XML Schema (XSD)"),
        option("relaxng", "RELAX NG"),
        option("dtd", "DTD"),
      );
      const text = h("textarea", {
        ...mono,
        rows: "14",
        "data-field": `${cp}.schema`,
        value: String(c.schema ?? ""),
        oninput: (e: Event) => setOrDelete(c, "schema", (e.target as HTMLTextAreaElement).value || undefined),
      });
      const stored = h("input", {
        ...mono,
        size: "60",
        "data-field": `${cp}.schema_uri`,
        value: String(c.schema_uri ?? ""),
        oninput: (e: Event) =>
          setOrDelete(c, "schema_uri", (e.target as HTMLInputElement).value || undefined),
      });
      return [
        field("Schema language", kind),
        field("Schema", text, "The schema text itself. Checked when you save."),
        field(
          "Or a stored XSD",
          stored,
          "XSD only, instead of the text: the URI of an XSD document stored for the organization; what it includes and imports is resolved from the stored documents when you save.",
        ),
      ];
    }
    case "schematron":
      return schematronEditor(d, cp);
    case "csv_table": {
      const dialect = (c.dialect ?? {}) as Record<string, unknown>;
      // The dialect is sent only when it differs from the defaults (comma, header row).
      const keep = () => {
        if (Object.keys(dialect).length) c.dialect = dialect;
        else delete c.dialect;
      };
      const delim = h("input", {
        ...mono,
        // One character, which may be an emoji (two UTF-16 code units: maxlength="1" refused it).
        size: "2",
        "data-field": `${cp}.dialect.delimiter`,
        value: String(dialect.delimiter ?? ","),
        oninput: (e: Event) => {
          const v = (e.target as HTMLInputElement).value;
          setOrDelete(dialect, "delimiter", v === "," ? undefined : v);
          keep();
        },
      });
      const header = checkbox("The first row is a header", {
        checked: dialect.header !== false,
        onchange: (e: Event) => {
          setOrDelete(dialect, "header", (e.target as HTMLInputElement).checked ? undefined : false);
          keep();
        },
      });
      return [
        field(
          "Table Schema",
          jsonArea(d, "schema", `${cp}.schema`, 14),
          "Frictionless Table Schema: fields (name, type, constraints), primaryKey, missingValues.",
        ),
        field("Delimiter", delim),
        header,
      ];
    }
    case "assertions":
      return [
        h(
          "p",
          { class: "hint" },
          "CEL expressions over ",
          h("code", null, "data"),
          " (the parsed submission) or ",
          h("code", null, "row"),
          " (each CSV row).",
        ),
        rulesEditor(d, cp),
        xmlListsInput(d, cp),
      ];
    case "text_rules": {
      const enc = h(
        "select",
        {
          "data-field": `${cp}.encoding`,
          value: String(c.encoding ?? ""),
          onchange: (e: Event) => setOrDelete(c, "encoding", (e.target as HTMLSelectElement).value),
        },
        option("", "Any"),
        ["utf-8", "utf-8-bom", "utf-8-no-bom", "ascii"].map((v) => option(v, v)),
      );
      return [
        h(
          "div",
          { class: "grid3" },
          field("Max bytes", numberInput(d, "max_bytes", `${cp}.max_bytes`, { min: "0" })),
          field("Max lines", numberInput(d, "max_lines", `${cp}.max_lines`, { min: "0" })),
          field("Max line length", numberInput(d, "max_line_length", `${cp}.max_line_length`, { min: "1" })),
        ),
        field("Encoding", enc),
        field(
          "Patterns (JSON, optional)",
          jsonArea(d, "patterns", `${cp}.patterns`, 6),
          'e.g. [{"regex": "TODO", "must": "not_match", "message": "No TODOs"}]',
        ),
      ];
    }
    default:
      return field("Configuration (JSON)", jsonArea(d, "config", cp, 10));
  }
}

/** Limits every step may carry, folded away. */
export function limitsEditor(d: StepDraft, p: string): HTMLElement {
  return h(
    "details",
    { class: "limits" },
    h("summary", null, "Limits"),
    h(
      "div",
      { class: "grid3" },
      field(
        "Max findings",
        numberInput(d, "max_findings", `${p}.config.max_findings`, { min: "1", placeholder: "1000" }),
      ),
      field(
        "Time limit (ms)",
        numberInput(d, "timeout_ms", `${p}.config.timeout_ms`, { min: "1", placeholder: "server default" }),
      ),
    ),
  );
}
