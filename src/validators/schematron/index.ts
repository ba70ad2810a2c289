// `schematron`: ISO Schematron business rules over XML (EN 16931, XRechnung, Peppol, HL7 …).
// Engine: our reading of the schema (schema.ts) over fontoxpath's XPath 3.1; docs/decisions.md
// says why not SaxonJS. Codes: schematron.<assertion id> (schematron.failed_assert /
// schematron.successful_report without one), schematron.evaluation_error, and the xml.* codes of
// an unparsable document.
import { MAX_SCHEMATRON_ATTRIBUTES } from "../limits.ts";
import { maxSchematronElements, moreStartTagsThan } from "./element-limit.ts";
import { COMMON_CONFIG_PROPERTIES } from "../shared/common.ts";
import { issue, isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import { FindingCollector, finding } from "../shared/findings.ts";
import { parseXml, problemFinding } from "../shared/xml.ts";
import type {
  CompiledValidator,
  ConfigIssue,
  ValidationContext,
  ValidationInput,
  ValidatorDef,
} from "../types.ts";
import type { XmlElement } from "libxml2-wasm";
import { expressionIssues } from "./check.ts";
import { SourceDocument } from "./document.ts";
import { declaredEntities, undeclaredEntities } from "./entities.ts";
import { Evaluator, type ParameterValue } from "./evaluate.ts";
import { buildSchema, SchemaProblem, type Schematron } from "./schema.ts";

const MAX_SCHEMA_CHARS = 5 * 1024 * 1024;
const MAX_INCLUDES = 64;

const configSchema = {
  type: "object",
  required: ["schema"],
  properties: {
    schema: {
      type: "string",
      minLength: 1,
      maxLength: MAX_SCHEMA_CHARS,
      description: "The ISO Schematron schema (sch:schema) itself.",
    },
    includes: {
      type: "object",
      maxProperties: MAX_INCLUDES,
      additionalProperties: { type: "string", maxLength: MAX_SCHEMA_CHARS },
      description: "Documents sch:include and sch:extends may name: href (relative to the schema) → text.",
    },
    phase: {
      type: "string",
      minLength: 1,
      description: 'A sch:phase id, "#ALL", or "#DEFAULT" (the schema\'s defaultPhase, else #ALL).',
    },
    parameters: {
      type: "object",
      additionalProperties: { type: ["string", "number", "boolean"] },
      description: "Values for the schema's global sch:let variables, by name (replacing their expressions).",
    },
    ...COMMON_CONFIG_PROPERTIES,
  },
  additionalProperties: false,
};

export interface SchematronConfig {
  schema: string;
  includes?: Record<string, string>;
  phase?: string;
  parameters?: Record<string, ParameterValue>;
}

function build(cfg: SchematronConfig): Schematron {
  return buildSchema(cfg.schema, cfg.includes ?? {});
}

function checkConfig(config: unknown): ConfigIssue[] {
  if (!isPlainObject(config)) return [issue("", "invalid", "must be an object")];
  const shape = shapeIssues(configSchema, config);
  if (shape.length > 0) return shape;
  const cfg = config as unknown as SchematronConfig;
  let schema: Schematron;
  try {
    schema = build(cfg);
  } catch (e) {
    if (e instanceof SchemaProblem) return [issue(e.field, "invalid_schema", e.message)];
    // Anything else the parsers throw on odd input is still the schema's problem, never a 500.
    return [issue("schema", "invalid_schema", `could not be read: ${(e as Error)?.message ?? String(e)}`)];
  }
  const issues = expressionIssues(schema, cfg.phase);
  const phase = cfg.phase;
  if (
    phase !== undefined &&
    phase !== "#ALL" &&
    phase !== "#DEFAULT" &&
    !Object.hasOwn(schema.phases, phase)
  ) {
    const known = Object.keys(schema.phases);
    issues.push(
      issue(
        "phase",
        "unknown_phase",
        `"${phase}" is not a phase of the schema (${["#ALL", ...known].join(", ")})`,
      ),
    );
  }
  const globals = new Set(
    [...schema.lets, ...Object.values(schema.phases).flatMap((p) => p.lets)].map((l) => l.name),
  );
  for (const name of Object.keys(cfg.parameters ?? {})) {
    if (!globals.has(name))
      issues.push(issue(`parameters.${name}`, "unknown_parameter", "names no global sch:let of the schema"));
  }
  return issues;
}

/**
 * The XPath expressions a schema can leave in fontoxpath's cache: each rule's context (and its tests,
 * evaluated together), each assert and report, each let. Measured (2026-11-29): ~10 KB each on
 * EN 16931 (1,083 of them, 11 MB once a document ran), ~4 KB each for a rule of two asserts.
 */
function expressionCount(schema: Schematron): number {
  let count = schema.lets.length;
  for (const phase of Object.values(schema.phases)) count += phase.lets.length;
  for (const pattern of schema.patterns) {
    count += pattern.lets.length;
    for (const rule of pattern.rules) count += 1 + rule.lets.length + rule.checks.length;
  }
  return count;
}

function compile(config: unknown) {
  const cfg = config as SchematronConfig;
  const schema = build(cfg);
  const evaluator = new Evaluator(schema, cfg.phase ?? null, cfg.parameters ?? {});
  const validate = (input: ValidationInput, ctx: ValidationContext) => {
    const out = new FindingCollector(ctx.maxFindings);
    // libxml2 first: well-formedness, depth and entity limits with the same codes as xml_schema.
    const parsed = parseXml(input.bytes);
    if ("problems" in parsed) {
      for (const p of parsed.problems) if (!out.add(problemFinding(p, input.text))) break;
      return out.result();
    }
    let doc: SourceDocument;
    try {
      // Before slimdom's quadratic build: the element, found in libxml2's tree when some start
      // tag is long enough to hold that many attributes (one XPath, ~0.1 s on 5 MB, else skipped).
      const long = longTag(input.text);
      const crowded = long ? parsed.doc.get(`//*[count(@*) > ${MAX_SCHEMATRON_ATTRIBUTES}]`) : null;
      if (crowded) return tooManyAttributes(out, (crowded as XmlElement).name, crowded.line);
      const entities = declaredEntities(input.text);
      // An entity that holds elements: saxes can only insert text, so it reads libxml2's tree,
      // entities expanded, and findings name their node's path but no line.
      const expanded = entities === "markup" ? parsed.doc.toString({ format: false }) : null;
      // Namespace declarations are attributes to slimdom too, and XPath's @* leaves them out: a
      // start tag of 100,000 of them ran past the step's time limit (2026-11-29).
      const declaring = expanded !== null ? crowdedTag(expanded) : long ? crowdedTag(input.text) : null;
      if (declaring) return tooManyAttributes(out, declaring.name, expanded === null ? declaring.line : 0);
      const maxElements = maxSchematronElements();
      if (maxElements > 0 && moreStartTagsThan(expanded ?? input.text, maxElements)) {
        out.add(
          finding(
            "xml.too_many_elements",
            `the document has more than ${maxElements} elements, the most a Schematron step reads (ASSAY_MAX_SCHEMATRON_ELEMENTS): it was not checked`,
            { line: 1, column: 1, rule: null },
          ),
        );
        return out.result();
      }
      if (entities === "markup") doc = new SourceDocument(expanded ?? "", {}, false);
      else {
        const undeclared = undeclaredEntities(input.text);
        doc = new SourceDocument(input.text, { ...undeclared, ...entities });
        // Well-formed only because a DTD Assay never reads may declare them: said, as `syntax` says it.
        if (Object.keys(undeclared).length > 0)
          for (const w of parsed.warnings) if (!out.add(problemFinding(w, input.text))) break;
      }
    } catch (e) {
      // libxml2 accepted it; saxes did not.
      out.add(
        finding("xml.not_well_formed", (e as Error).message.split("\n")[0], { rule: "xml:well-formed" }),
      );
      return out.result();
    } finally {
      parsed.doc.dispose();
    }
    evaluator.run(doc, out);
    return out.result();
  };
  // Read after each run: the trees of rewritten expressions are made as they are first evaluated.
  const fixed = expressionCount(schema);
  return Object.defineProperty(validate, "retains", {
    get: () => fixed + evaluator.retainedTrees,
    enumerable: true,
  }) as CompiledValidator;
}

function tooManyAttributes(out: FindingCollector, name: string, line: number) {
  out.add(
    finding(
      "xml.too_many_attributes",
      `the element <${name}> has more than ${MAX_SCHEMATRON_ATTRIBUTES} attributes: the document was not checked`,
      { line: line > 0 ? line : null, rule: null },
    ),
  );
  return out.result();
}

/**
 * The first start tag holding more than MAX_SCHEMATRON_ATTRIBUTES attributes and namespace
 * declarations together (each has one `=` outside quotes), with its name and line; comments,
 * CDATA sections and processing instructions skipped. Only runs of text without `<` long enough
 * to hold one are read (as `longTag`), so an ordinary document costs one scan for `<`.
 */
export function crowdedTag(text: string): { name: string; line: number } | null {
  const need = 5 * MAX_SCHEMATRON_ATTRIBUTES;
  const skip = (at: number, open: string, close: string) =>
    text.startsWith(open, at) ? text.indexOf(close, at + open.length) : -2;
  for (let at = text.indexOf("<"); at !== -1; ) {
    let end = skip(at, "<!--", "-->");
    if (end === -2) end = skip(at, "<![CDATA[", "]]>");
    if (end === -2) end = skip(at, "<?", "?>");
    if (end !== -2) {
      if (end === -1) return null;
      at = text.indexOf("<", end);
      continue;
    }
    const next = text.indexOf("<", at + 1);
    if ((next === -1 ? text.length : next) - at > need && /[^\s/>!]/.test(text[at + 1] ?? "")) {
      let count = 0;
      let quote = "";
      let i = at + 1;
      for (; i < text.length; i++) {
        const c = text[i];
        if (quote) {
          if (c === quote) quote = "";
        } else if (c === '"' || c === "'") quote = c;
        else if (c === "=") count++;
        else if (c === ">") break;
      }
      if (count > MAX_SCHEMATRON_ATTRIBUTES) {
        const name = /^[^\s/>]+/.exec(text.slice(at + 1, at + 1 + 1000))?.[0] ?? "";
        let line = 1;
        for (let j = text.indexOf("\n"); j !== -1 && j < at; j = text.indexOf("\n", j + 1)) line++;
        return { name, line };
      }
    }
    at = next;
  }
  return null;
}

/**
 * Whether a run of text without `<` is long enough for a start tag of more than
 * MAX_SCHEMATRON_ATTRIBUTES attributes: each takes 5 characters at least (` a=""`), and an
 * attribute value cannot hold `<`. A scan of the text (3–14 ms on 4.7 MB once warm).
 */
function longTag(text: string): boolean {
  const need = 5 * MAX_SCHEMATRON_ATTRIBUTES;
  for (let at = text.indexOf("<"); at !== -1; ) {
    const next = text.indexOf("<", at + 1);
    if ((next === -1 ? text.length : next) - at > need) return true;
    at = next;
  }
  return false;
}

export const schematronValidator: ValidatorDef = {
  slug: "schematron",
  name: "Schematron",
  description:
    "Checks XML against ISO Schematron business rules (XPath 3.1; phases, parameters, includes given in the config; nothing is fetched).",
  supportedFileTypes: ["XML"],
  configSchema,
  checkConfig,
  compile,
};
