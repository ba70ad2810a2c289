// Runs a validator the way the worker does: save-time check, compile once, run on bytes.
import { expect } from "bun:test";
import { checkStepConfig, getValidator, maxFindingsOf } from "../../../src/validators/registry.ts";
import type { FileType, Finding, ValidationResult } from "../../../src/validators/types.ts";

export function input(content: string | Uint8Array, fileType: FileType) {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  // As a worker reads it: TextDecoder takes a leading byte order mark off.
  const text = new TextDecoder().decode(bytes);
  return { bytes, text, fileType, filename: null };
}

export function run(
  slug: string,
  config: Record<string, unknown>,
  content: string | Uint8Array,
  fileType: FileType,
): ValidationResult {
  expect(checkStepConfig(slug, config)).toEqual([]);
  const def = getValidator(slug);
  if (!def) throw new Error(`no validator ${slug}`);
  return def.compile(config)(input(content, fileType), { maxFindings: maxFindingsOf(config) });
}

/** The findings reduced to what tests assert most: code, line, column (and path when asked). */
export function brief(r: ValidationResult, withPath = false) {
  return r.findings.map((f: Finding) =>
    withPath
      ? { code: f.code, line: f.line, column: f.column, path: f.path }
      : { code: f.code, line: f.line, column: f.column },
  );
}

export function codes(r: ValidationResult): string[] {
  return r.findings.map((f) => f.code);
}
