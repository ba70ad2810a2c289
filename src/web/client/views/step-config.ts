// A step as the editor holds it, and the config sent on save. JSON typed by the user is kept as
// text (a half-typed schema is not lost on a re-render) and parsed only on save.

export interface StepDraft {
  key: number;
  name: string;
  validator: string;
  is_active: boolean;
  config: Record<string, unknown>;
  /** JSON typed by the user, parsed on save (so a half-typed schema is not lost). */
  texts: Record<string, string>;
}

export const pretty = (v: unknown) => JSON.stringify(v, null, 2);

export function defaultConfig(validator: string): Record<string, unknown> {
  switch (validator) {
    case "json_schema":
      return { schema: { type: "object", properties: {}, required: [] } };
    case "xml_schema":
      return { schema_type: "xsd" };
    case "schematron":
      return { schema: "" };
    case "csv_table":
      return { schema: { fields: [{ name: "id", type: "integer" }] } };
    case "assertions":
      return { rules: [{ id: "rule-1", expr: "", message: "" }] };
    default:
      return {};
  }
}

/** The JSON-text buffers an editor needs, from a config. */
export function textsFor(validator: string, config: Record<string, unknown>): Record<string, string> {
  if (validator === "json_schema" || validator === "csv_table")
    return { schema: pretty(config.schema ?? {}) };
  if (validator === "text_rules") return { patterns: config.patterns ? pretty(config.patterns) : "" };
  if (validator === "schematron")
    return {
      includes: config.includes ? pretty(config.includes) : "",
      parameters: config.parameters ? pretty(config.parameters) : "",
    };
  if (["syntax", "xml_schema", "assertions"].includes(validator)) return {};
  const { max_findings: _m, timeout_ms: _t, ...rest } = config;
  return { config: pretty(rest) };
}

/** The config to send: the draft's values with its JSON buffers parsed. Problems name fields. */
export function buildConfig(
  d: StepDraft,
  p: string,
  problems: { field: string; code: string; message: string }[],
): Record<string, unknown> {
  // Raw-JSON editors own the whole config but the limits: keys removed from the text go away.
  const config: Record<string, unknown> =
    "config" in d.texts
      ? Object.fromEntries(
          Object.entries(d.config).filter(([k]) => k === "max_findings" || k === "timeout_ms"),
        )
      : { ...d.config };
  for (const [key, text] of Object.entries(d.texts)) {
    const path = key === "config" ? `${p}.config` : `${p}.config.${key}`;
    if (!text.trim()) {
      // Optional JSON buffers: empty means the key is left out.
      if (["patterns", "includes", "parameters"].includes(key)) delete config[key];
      else problems.push({ field: path, code: "required", message: "is required (JSON)" });
      continue;
    }
    try {
      const v = JSON.parse(text);
      if (key === "config") Object.assign(config, v);
      else config[key] = v;
    } catch (e) {
      problems.push({
        field: path,
        code: "invalid_json",
        message: `is not valid JSON: ${(e as Error).message}`,
      });
    }
  }
  return config;
}
