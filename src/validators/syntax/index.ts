// `syntax`: is the submission well-formed for its file type? One engine per type, positions
// always. Config: {} (plus the common keys).
import { isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import { ALL_FILE_TYPES, COMMON_CONFIG_PROPERTIES } from "../shared/common.ts";
import { scanCsv, resolveDialect } from "../shared/csv.ts";
import { FindingCollector, finding } from "../shared/findings.ts";
import { duplicateKeys, isJsonProblem, parseJson } from "../shared/json.ts";
import { bytePosition, firstInvalidUtf8 } from "../shared/utf8.ts";
import { parseXml, problemFinding } from "../shared/xml.ts";
import { parseYaml, yamlValue } from "../shared/yaml.ts";
import type { ValidationContext, ValidationInput, ValidationResult, ValidatorDef } from "../types.ts";

const configSchema = {
  type: "object",
  properties: { ...COMMON_CONFIG_PROPERTIES },
  additionalProperties: false,
};

function checkJson(input: ValidationInput, out: FindingCollector): void {
  const r = parseJson(input.text);
  if (isJsonProblem(r)) {
    out.add(finding(r.code, r.message, { ...r.position }));
    return;
  }
  // One more than fits, so that a dropped duplicate marks the step truncated.
  for (const d of duplicateKeys(input.text, out.room + 1)) {
    const pos = r.lines.position(d.offset);
    if (
      !out.add(
        finding("json.duplicate_key", `duplicate key "${d.key}"; the last one wins`, {
          severity: "warning",
          ...pos,
          path: d.path,
        }),
      )
    )
      return;
  }
}

function checkYaml(input: ValidationInput, out: FindingCollector): void {
  const r = parseYaml(input.text);
  for (const p of r.problems) {
    if (!out.add(finding(p.code, p.message, { severity: p.severity, ...p.position }))) return;
  }
  if (r.problems.some((p) => p.severity === "error")) return;
  // Building the value catches unresolved aliases and alias bombs, which are not parse errors.
  for (const doc of r.docs) {
    const v = yamlValue(doc, r.lines, false, false);
    if ("code" in v && !out.add(finding(v.code, v.message, { ...v.position, path: v.path }))) return;
  }
}

function checkXml(input: ValidationInput, out: FindingCollector): void {
  const r = parseXml(input.bytes);
  if ("doc" in r) r.doc.dispose();
  for (const p of "doc" in r ? r.warnings : r.problems) if (!out.add(problemFinding(p, input.text))) return;
}

function checkCsv(input: ValidationInput, out: FindingCollector): void {
  const p = scanCsv(input.text, resolveDialect(input.text), () => true);
  if (p) out.add(finding(p.code, p.message, { ...p.position }));
}

function checkText(input: ValidationInput, out: FindingCollector): void {
  const bad = firstInvalidUtf8(input.bytes);
  // Bytes decoded cleanly from a declared non-UTF-8 charset (no U+FFFD) are fine as they are.
  if (bad < 0 || !input.text.includes("\ufffd")) return;
  const pos = bytePosition(input.bytes, bad);
  const hex = input.bytes[bad].toString(16).padStart(2, "0");
  out.add(finding("text.encoding_error", `invalid UTF-8 byte 0x${hex} at byte offset ${bad}`, pos));
}

const CHECKS = { JSON: checkJson, YAML: checkYaml, XML: checkXml, CSV: checkCsv, TEXT: checkText };

export const syntaxValidator: ValidatorDef = {
  slug: "syntax",
  name: "Syntax",
  description: "Well-formedness of JSON, XML, YAML, CSV and text (UTF-8), with line and column.",
  supportedFileTypes: ALL_FILE_TYPES,
  configSchema,
  checkConfig(config) {
    if (!isPlainObject(config)) return [{ field: "", code: "invalid", message: "must be an object" }];
    return shapeIssues(configSchema, config);
  },
  compile() {
    return (input: ValidationInput, ctx: ValidationContext): ValidationResult => {
      const out = new FindingCollector(ctx.maxFindings);
      CHECKS[input.fileType](input, out);
      return out.result();
    };
  },
};
