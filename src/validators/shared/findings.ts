import { headOf } from "../../lib/text.ts";
import { MAX_FINDING_MESSAGE_CHARS, MAX_STEP_FINDING_CHARS } from "../limits.ts";
import type { Finding, Severity, ValidationResult } from "../types.ts";

export interface FindingInit {
  severity?: Severity;
  path?: string | null;
  line?: number | null;
  column?: number | null;
  rule?: string | null;
}

export function finding(code: string, message: string, init: FindingInit = {}): Finding {
  return {
    severity: init.severity ?? "error",
    code,
    message,
    path: init.path ?? null,
    line: init.line ?? null,
    column: init.column ?? null,
    rule: init.rule ?? null,
  };
}

/**
 * Collects findings up to ctx.maxFindings. `truncated` becomes true only when a finding is
 * actually dropped, so callers loop `while (!out.truncated)` and stop at the first overflow.
 */
export class FindingCollector {
  readonly findings: Finding[] = [];
  truncated = false;

  constructor(private readonly max: number) {}

  /** Findings that still fit; a producer asks for one more than this to learn it overflowed. */
  get room(): number {
    return Math.max(0, this.max - this.findings.length);
  }

  add(f: Finding): boolean {
    if (this.findings.length >= this.max) {
      this.truncated = true;
      return false;
    }
    this.findings.push(f);
    return true;
  }

  result(): ValidationResult {
    return { findings: this.findings, truncated: this.truncated };
  }
}

/**
 * A step's findings as they leave the worker: at most `max`, messages cut at
 * MAX_FINDING_MESSAGE_CHARS, and no more than MAX_STEP_FINDING_CHARS in all (limits.ts); their
 * text well-formed Unicode.
 * `truncated` when anything was dropped.
 */
export function boundFindings(all: Finding[], max: number): { findings: Finding[]; truncated: boolean } {
  const findings: Finding[] = [];
  let chars = 0;
  for (const f of all) {
    if (findings.length >= max) return { findings, truncated: true };
    // Well-formed: data quoted in a message or named in a path (a JSON key "\ud800") may hold a
    // lone surrogate, which every answer would write as an escape strict parsers refuse: U+FFFD,
    // as the reports write it. The cut never splits a pair either.
    const message = (
      f.message.length > MAX_FINDING_MESSAGE_CHARS
        ? `${headOf(f.message, MAX_FINDING_MESSAGE_CHARS - 1)}…`
        : f.message
    ).toWellFormed();
    const path = f.path?.toWellFormed() ?? null;
    const rule = f.rule?.toWellFormed() ?? null;
    chars += message.length + (path?.length ?? 0) + (rule?.length ?? 0);
    if (chars > MAX_STEP_FINDING_CHARS) return { findings, truncated: true };
    findings.push(
      message === f.message && path === f.path && rule === f.rule ? f : { ...f, message, path, rule },
    );
  }
  return { findings, truncated: false };
}

/** Appends one JSON Pointer segment (RFC 6901 escaping). */
export function pointerJoin(base: string, segment: string | number): string {
  return `${base}/${String(segment).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

export function pointerSegments(pointer: string): string[] {
  if (pointer === "" || pointer === "#") return [];
  return pointer
    .replace(/^#/, "")
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}
