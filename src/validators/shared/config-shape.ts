// Save-time shape check of a step config against the validator's published configSchema, so the
// catalogue and the check can never disagree. Deep checks (schemas, expressions) follow per validator.
import Schema from "typebox/schema";
import { Settings } from "typebox/system";
import { MAX_CONFIG_ISSUES } from "../limits.ts";
import type { ConfigIssue } from "../types.ts";
import { boundMessage } from "./bound-words.ts";
import { pointerSegments } from "./findings.ts";

type Validator = ReturnType<typeof Schema.Compile>;
const compiled = new WeakMap<object, Validator>();

/** "/rules/1/expr" → "rules[1].expr" (the ConfigIssue.field convention). */
export function fieldFromPointer(pointer: string, prefix = ""): string {
  let out = prefix;
  for (const seg of pointerSegments(pointer)) {
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else out += out === "" ? seg : `.${seg}`;
  }
  return out;
}

export function joinField(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  return base === "" ? key : `${base}.${key}`;
}

export function issue(field: string, code: string, message: string): ConfigIssue {
  return { field, code, message };
}

interface TbError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message: string;
}

/** Structural issues of `value` against a JSON Schema; field paths are relative to the config. */
export function shapeIssues(schema: Record<string, unknown>, value: unknown): ConfigIssue[] {
  let v = compiled.get(schema);
  if (!v) {
    v = Schema.Compile(schema as never);
    compiled.set(schema, v);
  }
  if (v.Check(value)) return [];
  Settings.Set({ maxErrors: MAX_CONFIG_ISSUES * 4 });
  const [, errors] = v.Errors(value) as [boolean, TbError[]];
  const issues: ConfigIssue[] = [];
  // Branch errors under anyOf/oneOf are speculative: report the combinator only.
  const combinators = errors
    .filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf")
    .map((e) => `${e.schemaPath}/${e.keyword}/`);
  for (const e of errors) {
    if (combinators.some((c) => e.schemaPath.startsWith(c))) continue;
    if (e.keyword === "boolean" && /\/additionalProperties$/.test(e.schemaPath)) continue;
    if (e.keyword === "required") {
      for (const p of (e.params.requiredProperties as string[]) ?? []) {
        issues.push(issue(joinField(fieldFromPointer(e.instancePath), p), "required", "is required"));
      }
    } else if (e.keyword === "additionalProperties") {
      for (const p of (e.params.additionalProperties as string[]) ?? []) {
        issues.push(
          issue(joinField(fieldFromPointer(e.instancePath), p), "unknown_key", "is not a known key"),
        );
      }
    } else {
      issues.push(issue(fieldFromPointer(e.instancePath), "invalid", boundMessage(e)));
    }
  }
  return issues.slice(0, MAX_CONFIG_ISSUES);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
