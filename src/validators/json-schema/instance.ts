// The submission as JSON values to validate, each with a way back from a JSON Pointer to a
// position. JSON is one document; a YAML stream may hold several, each validated on its own.
import { finding } from "../shared/findings.ts";
import { isJsonProblem, jsonPointerOffset, parseJson } from "../shared/json.ts";
import { parseYaml, yamlPointerOffset, yamlValue } from "../shared/yaml.ts";
import type { Finding, ValidationInput } from "../types.ts";
import type { Locate } from "./errors.ts";

export interface InstanceDoc {
  value?: unknown;
  problem?: Finding;
  locate: Locate;
}

const nowhere: Locate = () => null;

export function instanceDocuments(input: ValidationInput): InstanceDoc[] {
  if (input.fileType === "YAML") {
    const r = parseYaml(input.text);
    const errors = r.problems.filter((p) => p.severity === "error");
    if (errors.length > 0) {
      return errors.map((p) => ({ problem: finding(p.code, p.message, { ...p.position }), locate: nowhere }));
    }
    // An empty stream is one document whose value is null, as YAML defines it.
    if (r.docs.length === 0) return [{ value: null, locate: nowhere }];
    return r.docs.map((doc) => {
      const v = yamlValue(doc, r.lines);
      if ("code" in v) return { problem: finding(v.code, v.message, { ...v.position }), locate: nowhere };
      const locate: Locate = (pointer, key) => {
        const off = yamlPointerOffset(doc, pointer, key);
        return off === null ? null : r.lines.position(off);
      };
      return { value: v.value, locate };
    });
  }
  const r = parseJson(input.text);
  if (isJsonProblem(r)) return [{ problem: finding(r.code, r.message, { ...r.position }), locate: nowhere }];
  const locate: Locate = (pointer, key) => {
    const off = jsonPointerOffset(r.tree(), pointer, key);
    return off === null ? null : r.lines.position(off);
  };
  return [{ value: r.value, locate }];
}
