// The check half of the inline lane (executor.runInline) for an HTTP thread other than the main
// one (src/http/threads/): the same job, the same runner, the same final state — without the
// write, which only the main thread does (executor.commitInline). Kept step for step with
// runInline's first half.
import type { InlineRunner } from "../jobs/inline.ts";
import { now } from "../db/util.ts";
import type { WorkflowVersion } from "../workflows/types.ts";
import { type DirectRun, type FinalState, freshOf } from "./direct.ts";
import { type StepLimits, buildJob } from "./job.ts";
import { applyOutcome, finalStatus, summarize } from "./summary.ts";

/** The run's final state when the inline runner takes it and it ends; null: the main thread runs it. */
export async function checkInline(
  inline: InlineRunner,
  record: DirectRun["record"],
  def: WorkflowVersion,
  limits: StepLimits,
): Promise<FinalState | null> {
  const startedMs = performance.now();
  const startedAt = now();
  const { job: spec, timeouts } = buildJob(
    freshOf(record),
    record.submission.bytes,
    record.steps,
    def,
    true,
    limits,
  );
  if (!inline.accepts(spec)) return null;
  const job = inline.submit(spec, { stepTimeoutsMs: timeouts });
  if (!job) return null;
  const outcome = await job.done;
  const steps = applyOutcome(record.steps, outcome);
  const status = finalStatus(outcome.status, steps);
  // The inline lane ends completed or timed_out (a failing document goes to the pool).
  const error =
    status === "timed_out" || status === "error"
      ? (outcome.error ?? steps.find((s) => s.error)?.error ?? "The run could not finish.")
      : null;
  return {
    status,
    steps,
    summary: summarize(steps),
    error,
    startedAt,
    finishedAt: now(),
    durationMs: Math.round(performance.now() - startedMs),
  };
}
