// The submission as JSON values to validate, each with a way back from a JSON Pointer to a
// position. JSON is one document; a YAML stream may hold several, each validated on its own.
import { finding } from "../shared/findings.ts";
import { isJsonProblem, jsonPointerOffset, parseJson } from "../shared/json.ts";
import { parseYaml, yamlPointerOffset, yamlValue } from "../shared/yaml.ts";
import type { Finding, ValidationInput } from "../types.ts";
import type { Locate } from "./errors.ts";
import { appendAll } from "../../lib/arrays.ts";

export interface InstanceDoc {
  value?: unknown;
  problem?: Finding;
  locate: Locate;
}

const nowhere: Locate = () => null;

/**
 * Whether a value holds a number that is not finite (cheap: no paths kept); on the way, every
 * object of the value is given a null prototype. typebox tests a property's presence with `in`
 * (`"toString" in value`), which sees Object.prototype's members: `required: ["toString"]`
 * passed `{}`, and `properties: {valueOf: {type: "string"}}` failed it. A JSON object has its own
 * members only.
 */
function prepareValue(value: unknown): boolean {
  const stack: unknown[] = [value];
  let nonFinite = false;
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "number") {
      if (!Number.isFinite(v)) nonFinite = true;
    } else if (Array.isArray(v)) appendAll(stack, v);
    else if (v !== null && typeof v === "object") {
      Object.setPrototypeOf(v, null);
      for (const k in v) stack.push((v as Record<string, unknown>)[k]);
    }
  }
  return nonFinite;
}

const escapeToken = (k: string) => k.replace(/~/g, "~0").replace(/\//g, "~1");

/** JSON Pointer of the first number that is not finite (depth-first, in document order). */
function firstNonFinite(value: unknown): { pointer: string; n: number } | null {
  const stack: [unknown, string][] = [[value, ""]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === "number" && !Number.isFinite(v)) return { pointer: at, n: v };
    const entries = Array.isArray(v)
      ? v.map((x, i) => [x, `${at}/${i}`] as [unknown, string])
      : v !== null && typeof v === "object"
        ? Object.entries(v).map(([k, x]) => [x, `${at}/${escapeToken(k)}`] as [unknown, string])
        : [];
    for (let i = entries.length - 1; i >= 0; i--) stack.push(entries[i]!);
  }
  return null;
}

/**
 * A number the schema cannot be checked against: 1e400 in JSON (beyond a double, so it became
 * Infinity), `.inf`/`.nan` in YAML (not JSON values at all). typebox, like Ajv, takes a number
 * that is not finite for no number: `type: number` failed while `maximum`/`minimum` skipped it,
 * so `.inf` passed `maximum: 5`. One finding for the document instead, where the number is.
 */
function nonFiniteProblem(value: unknown, locate: Locate): Finding | null {
  if (!prepareValue(value)) return null;
  const at = firstNonFinite(value)!;
  const what = Number.isNaN(at.n)
    ? "NaN (.nan) is not a JSON number"
    : "a number beyond ±1.8e308 (or .inf, -.inf) cannot be compared";
  return finding("json_schema.unsupported_number", `${what}: the document was not checked`, {
    path: at.pointer,
    ...locate(at.pointer, false),
  });
}

export function instanceDocuments(input: ValidationInput): InstanceDoc[] {
  if (input.fileType === "YAML") {
    const r = parseYaml(input.text);
    const errors = r.problems.filter((p) => p.severity === "error");
    if (errors.length > 0) {
      return errors.map((p) => ({ problem: finding(p.code, p.message, { ...p.position }), locate: nowhere }));
    }
    // A stream without a document (empty, or only comments) is checked as one document, null:
    // YAML 1.2 says it has none (the YAML test suite's AVM7), but checked as none an empty file
    // would pass every schema (docs/conformance.md, "YAML conformance"). assertions does the same.
    if (r.docs.length === 0) return [{ value: null, locate: nowhere }];
    return r.docs.map((doc) => {
      const v = yamlValue(doc, r.lines);
      if ("code" in v)
        return { problem: finding(v.code, v.message, { ...v.position, path: v.path }), locate: nowhere };
      const locate: Locate = (pointer, key) => {
        const off = yamlPointerOffset(doc, pointer, key);
        return off === null ? null : r.lines.position(off);
      };
      const problem = nonFiniteProblem(v.value, locate);
      return problem ? { problem, locate } : { value: v.value, locate };
    });
  }
  const r = parseJson(input.text);
  if (isJsonProblem(r)) return [{ problem: finding(r.code, r.message, { ...r.position }), locate: nowhere }];
  const locate: Locate = (pointer, key) => {
    const off = jsonPointerOffset(r.tree(), pointer, key);
    return off === null ? null : r.lines.position(off);
  };
  const problem = nonFiniteProblem(r.value, locate);
  return [problem ? { problem, locate } : { value: r.value, locate }];
}
