// Pieces every validator's configSchema and checkConfig share.
import type { FileType } from "../types.ts";

/** The common step keys (CONTRACT §2a), repeated in every published configSchema. */
export const COMMON_CONFIG_PROPERTIES = {
  max_findings: {
    type: "integer",
    minimum: 1,
    maximum: 10_000,
    default: 1000,
    description: "Findings kept for this step; more set summary.truncated.",
  },
  timeout_ms: {
    type: "integer",
    minimum: 1,
    maximum: 600_000,
    description: "Per-step time limit in milliseconds.",
  },
} as const;

export const SEVERITY_SCHEMA = { enum: ["error", "warning", "info"], default: "error" } as const;

export const ALL_FILE_TYPES: readonly FileType[] = ["JSON", "XML", "YAML", "CSV", "TEXT"];

/** Removes the common keys so a validator sees only its own config. */
export function withoutCommonKeys(config: Record<string, unknown>): Record<string, unknown> {
  const { max_findings: _m, timeout_ms: _t, ...rest } = config;
  return rest;
}
