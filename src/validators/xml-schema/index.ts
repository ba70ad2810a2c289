// `xml_schema`: validates XML against an XSD, RelaxNG or DTD with libxml2-wasm.
// Codes: xml.not_well_formed (+ xml.entity_expansion_limit, xml.max_depth), xml.schema_violation,
// xml.schema_warning, xml.validation_error. Paths are libxml2's XPath of the offending node.
import { COMMON_CONFIG_PROPERTIES } from "../shared/common.ts";
import { issue, isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import { FindingCollector, finding } from "../shared/findings.ts";
import { libxml } from "../shared/libxml.ts";
import { LineIndex } from "../shared/position.ts";
import { columnForXPath, parseXml } from "../shared/xml.ts";
import type { ConfigIssue, ValidationContext, ValidationInput, ValidatorDef } from "../types.ts";
import {
  cachedSchema,
  compileSchema,
  externalReference,
  SchemaCompileError,
  type SchemaType,
} from "./compile.ts";

const MAX_SCHEMA_CHARS = 5 * 1024 * 1024;

const configSchema = {
  type: "object",
  required: ["schema_type", "schema"],
  properties: {
    schema_type: { enum: ["xsd", "relaxng", "dtd"] },
    schema: {
      type: "string",
      minLength: 1,
      maxLength: MAX_SCHEMA_CHARS,
      description: "The schema text itself.",
    },
    ...COMMON_CONFIG_PROPERTIES,
  },
  additionalProperties: false,
};

interface XmlSchemaConfig {
  schema_type: SchemaType;
  schema: string;
}

function checkConfig(config: unknown): ConfigIssue[] {
  if (!isPlainObject(config)) return [issue("", "invalid", "must be an object")];
  const shape = shapeIssues(configSchema, config);
  if (shape.length > 0) return shape;
  const cfg = config as unknown as XmlSchemaConfig;
  const ext = externalReference(cfg.schema_type, cfg.schema);
  if (ext) {
    return [
      issue(
        "schema",
        "external_reference",
        `has an ${ext}; external documents are never loaded, inline them`,
      ),
    ];
  }
  try {
    // Compiled and freed at once: the API process should not hold wasm memory for schemas.
    compileSchema(cfg.schema_type, cfg.schema).dispose();
  } catch (e) {
    const message = e instanceof SchemaCompileError ? e.message : String(e);
    return [issue("schema", "invalid_schema", `is not a valid ${cfg.schema_type.toUpperCase()}: ${message}`)];
  }
  return [];
}

function compile(config: unknown) {
  const cfg = config as XmlSchemaConfig;
  return (input: ValidationInput, ctx: ValidationContext) => {
    const out = new FindingCollector(ctx.maxFindings);
    const parsed = parseXml(input.bytes);
    if ("problems" in parsed) {
      for (const p of parsed.problems) {
        if (!out.add(finding(p.code, p.message, { severity: p.severity, line: p.line, column: p.column })))
          break;
      }
      return out.result();
    }
    const lines = new LineIndex(input.text);
    const { XmlError, XmlValidateError } = libxml();
    try {
      cachedSchema(cfg.schema_type, cfg.schema).validate(parsed.doc);
    } catch (e) {
      if (e instanceof XmlValidateError) {
        for (const d of e.details) {
          const xpath = d.xpath ?? null;
          const line = d.line > 0 ? d.line : null;
          const column = d.col > 0 ? d.col : columnForXPath(lines, line, xpath);
          const warn = d.level < 2;
          const code = warn ? "xml.schema_warning" : "xml.schema_violation";
          const f = finding(code, d.message.trim(), {
            severity: warn ? "warning" : "error",
            path: xpath,
            line,
            column,
          });
          if (!out.add(f)) break;
        }
      } else if (e instanceof XmlError) {
        out.add(finding("xml.validation_error", `validation could not complete: ${e.message}`));
      } else throw e;
    } finally {
      parsed.doc.dispose();
    }
    return out.result();
  };
}

export const xmlSchemaValidator: ValidatorDef = {
  slug: "xml_schema",
  name: "XML Schema",
  description:
    "Validates XML against an XSD, RelaxNG or DTD schema (libxml2; no external entities, no network).",
  supportedFileTypes: ["XML"],
  configSchema,
  checkConfig,
  compile,
};
