// `xml_schema`: validates XML against an XSD, RelaxNG or DTD with libxml2-wasm.
// Codes: xml.not_well_formed (+ xml.entity_expansion_limit, xml.max_depth), xml.schema_violation,
// xml.schema_warning, xml.validation_error. Paths are libxml2's XPath of the offending node; every
// finding has a rule (rules.ts), and RelaxNG's restatements of one failure are reported once.
import { FindingCollector, finding } from "../shared/findings.ts";
import { libxml } from "../shared/libxml.ts";
import { declaredRoot } from "../shared/xml-prolog.ts";
import { LineIndex } from "../shared/position.ts";
import { exactStartTags, parseXml, positionForXPath, problemFinding, utf16Column } from "../shared/xml.ts";
import type { ValidationContext, ValidationInput, ValidationResult, ValidatorDef } from "../types.ts";
import { withErrorPaths } from "../shared/libxml-errors.ts";
import { cachedSchema, sourceKey } from "./compile.ts";
import { checkXmlSchemaConfig, sourceOf, type XmlSchemaConfig, xmlSchemaConfigSchema } from "./config.ts";
import { dedupe, validityRule } from "./rules.ts";
import { type FixedIndex, fixedValueMet, indexFixedValues } from "./fixed-values.ts";
import { KeyrefLocator } from "./keyref-node.ts";

/**
 * libxml2 gave up on the document (an internal error, not a verdict): the data was not checked,
 * so the step ends `error`, as for a CEL rule over its budget, never `failed` as if judged invalid.
 */
export function incompleteResult(reason: string): ValidationResult {
  const f = finding("xml.validation_error", `validation could not complete: ${reason}`, {
    rule: "xml:validation-incomplete",
  });
  return { findings: [f], truncated: false, error: f.message };
}

function compile(config: unknown) {
  const cfg = config as XmlSchemaConfig;
  const source = sourceOf(cfg);
  // Hashed once per compiled config, not per run: a schema set can weigh megabytes.
  const key = sourceKey(source);
  // Built on the first fixed-value error of an XSD step only (fixed-values.ts).
  let fixed: FixedIndex | null = null;
  const fixedMet = (message: string) => {
    fixed ??= indexFixedValues([
      ...(source.schema ? [source.schema] : []),
      ...Object.values(source.documents ?? {}),
    ]);
    return fixedValueMet(fixed, message);
  };
  return (input: ValidationInput, ctx: ValidationContext) => {
    const out = new FindingCollector(ctx.maxFindings);
    const parsed = parseXml(input.bytes);
    if ("problems" in parsed) {
      for (const p of parsed.problems) if (!out.add(problemFinding(p, input.text))) break;
      return out.result();
    }
    const lines = new LineIndex(input.text);
    const { XmlError, XmlValidateError } = libxml();
    // XML 1.0 VC: Root Element Type, which libxml2's validation against a given DTD leaves out:
    // the document's own DOCTYPE names its root (`<!DOCTYPE r><a/>` passed).
    if (cfg.schema_type === "dtd") {
      const r = declaredRoot(input.text);
      if (r && r.declared !== r.root)
        out.add(
          finding(
            "xml.schema_violation",
            `The document type declaration names the root element "${r.declared}", but the root element is "${r.root}".`,
            { path: `/${r.root}`, ...lines.position(r.rootAt), rule: "VC: Root Element Type" },
          ),
        );
    }
    try {
      // Paths for the errors that may become findings (echoes dropped): libxml-errors.ts.
      withErrorPaths(2 * ctx.maxFindings, () => cachedSchema(key, source).validate(parsed.doc));
    } catch (e) {
      if (e instanceof XmlValidateError) {
        const fresh = dedupe(cfg.schema_type);
        // A keyref error has no node from libxml2: its element is found again (keyref-node.ts).
        const keyrefs = new KeyrefLocator(parsed.doc);
        // As many as get a path from libxml2 (withErrorPaths): the rest are counted, not shown.
        const paths = e.details.map((d, i) =>
          d.xpath !== undefined || i >= 2 * ctx.maxFindings
            ? (d.xpath ?? null)
            : keyrefs.pathOf(d.message.trim(), d.line > 0 ? d.line : null),
        );
        const exact = exactStartTags(
          lines,
          e.details.flatMap((d, i) =>
            d.col <= 0
              ? [{ line: d.line > 0 ? d.line : null, xpath: paths[i] ?? null, message: d.message.trim() }]
              : [],
          ),
        );
        for (const [i, d] of e.details.entries()) {
          const line = d.line > 0 ? d.line : null;
          const message = d.message.trim();
          const xpath = paths[i] ?? null;
          if (!fresh(message, xpath, line)) continue;
          const rule = validityRule(cfg.schema_type, message);
          // libxml2 compares an element's fixed value as text; XML Schema, in the type's value space.
          if (rule === "cvc-elt.5.2.2" && cfg.schema_type === "xsd" && fixedMet(message)) continue;
          const warn = d.level < 2;
          const at =
            d.col > 0
              ? { line, column: utf16Column(input.text, line, d.col) }
              : positionForXPath(lines, line, xpath, message, exact);
          const f = finding(warn ? "xml.schema_warning" : "xml.schema_violation", shown(message), {
            severity: warn ? "warning" : "error",
            path: xpath,
            line: at.line,
            column: at.column,
            rule,
          });
          if (!out.add(f)) break;
        }
      } else if (e instanceof XmlError) {
        return incompleteResult(e.message);
      } else throw e;
    } finally {
      parsed.doc.dispose();
    }
    return out.result();
  };
}

/**
 * libxml2's RelaxNG message for a missing element it cannot name leaves the name's slot empty:
 * "Expecting an element , got nothing" reads as "Expecting an element, got nothing".
 */
const shown = (message: string) =>
  message.replace(/^Expecting an element , got nothing$/, "Expecting an element, got nothing");

export const xmlSchemaValidator: ValidatorDef = {
  slug: "xml_schema",
  name: "XML Schema",
  description:
    "Validates XML against an XSD, RelaxNG or DTD schema (libxml2; no external entities, no network).",
  supportedFileTypes: ["XML"],
  configSchema: xmlSchemaConfigSchema,
  checkConfig: checkXmlSchemaConfig,
  compile,
};
