// Pure functions from step outcomes to run status and summary (CONTRACT §2, Run).
import type { RunStatus as PoolStatus, RunOutcome } from "../jobs/model.ts";
import type { StepDef } from "../workflows/types.ts";
import type { RunStatus, RunStep, RunSummary } from "./types.ts";

/** The step list of a new run: one pending entry per active step of the workflow version. */
export function pendingSteps(active: readonly StepDef[]): RunStep[] {
  return active.map((s) =>
    stepState({ step_id: s.id, order: s.order, name: s.name, validator: s.validator }),
  );
}

type StepIdentity = Pick<RunStep, "step_id" | "order" | "name" | "validator">;

/**
 * A step's state built from its identity and what it is now, nothing else: a step read back from
 * the stored row carries `findings_count` (0 while pending, src/runs/store.ts), and a spread of it
 * kept that 0 over the findings an attempt then reported (hidden from the run, its findings page
 * and counts). Without `findings_count` the findings themselves say how many there are.
 */
export function stepState(
  s: StepIdentity,
  now: Partial<Pick<RunStep, "status" | "duration_ms" | "findings" | "error" | "truncated">> = {},
): RunStep {
  const step: RunStep = {
    step_id: s.step_id,
    order: s.order,
    name: s.name,
    validator: s.validator,
    status: now.status ?? "pending",
    duration_ms: now.duration_ms ?? null,
    findings: now.findings ?? [],
    error: now.error ?? null,
  };
  if (now.truncated !== undefined) step.truncated = now.truncated;
  return step;
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
    if (!o) return stepState(s, { status: "skipped" });
    return stepState(s, {
      status: o.status,
      duration_ms: o.durationMs,
      findings: o.findings,
      error: o.error ?? null,
      truncated: o.truncated,
    });
  });
}
