// Pure functions from step outcomes to run status and summary (CONTRACT §2, Run).
import type { RunStatus as PoolStatus, RunOutcome } from "../jobs/model.ts";
import type { StepDef } from "../workflows/types.ts";
import type { RunStatus, RunStep, RunSummary } from "./types.ts";

/** The step list of a new run: one pending entry per active step of the workflow version. */
export function pendingSteps(active: readonly StepDef[]): RunStep[] {
  return active.map((s) => ({
    step_id: s.id,
    order: s.order,
    name: s.name,
    validator: s.validator,
    status: "pending",
    duration_ms: null,
    findings: [],
    error: null,
  }));
}

export function summarize(steps: RunStep[]): RunSummary {
  const s: RunSummary = {
    errors: 0,
    warnings: 0,
    infos: 0,
    steps_passed: 0,
    steps_failed: 0,
    steps_skipped: 0,
    truncated: false,
  };
  for (const step of steps) {
    for (const f of step.findings) {
      if (f.severity === "error") s.errors++;
      else if (f.severity === "warning") s.warnings++;
      else s.infos++;
    }
    if (step.truncated) s.truncated = true;
    if (step.status === "passed") s.steps_passed++;
    else if (step.status === "failed" || step.status === "error") s.steps_failed++;
    else if (step.status === "skipped") s.steps_skipped++;
  }
  return s;
}

/** succeeded: no error-level finding; failed: the data broke a rule; error: we could not finish. */
export function finalStatus(pool: PoolStatus, steps: RunStep[]): RunStatus {
  if (pool === "timed_out") return "timed_out";
  if (pool === "canceled") return "canceled";
  if (pool === "crashed" || steps.some((s) => s.status === "error")) return "error";
  return steps.some((s) => s.status === "failed") ? "failed" : "succeeded";
}

/** Merges a pool outcome into the run's step list. */
export function applyOutcome(steps: RunStep[], outcome: RunOutcome): RunStep[] {
  return steps.map((s, i) => {
    const o = outcome.steps[i];
    if (!o) return { ...s, status: "skipped" };
    return {
      ...s,
      status: o.status,
      duration_ms: o.durationMs,
      findings: o.findings,
      error: o.error ?? null,
      truncated: o.truncated,
    };
  });
}
