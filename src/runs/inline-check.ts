// The check half of the inline lane: the job, the runner, the final state — without the write.
// executor.runInline is this plus its commit; an HTTP thread that serves a sync run itself
// (src/http/threads/thread-runs.ts) runs this before the route, which then commits it
// (executor.commitInline).
import type { InlineRunner } from "../jobs/inline.ts";
import { now } from "../db/util.ts";
import type { WorkflowVersion } from "../workflows/types.ts";
import { type DirectRun, type FinalState, freshOf } from "./direct.ts";
import { type StepLimits, buildJob } from "./job.ts";
import { applyOutcome, finalStatus, summarize } from "./summary.ts";

/**
 * The run's final state when the inline runner takes it and it ends. Otherwise null, and
 * `checked` says whether the runner had started on it (then a worker builds the findings).
 * Synchronous: the runner checks on this thread, and an await would cost a turn for nothing.
 */
export function checkInline(
  inline: InlineRunner,
  record: DirectRun["record"],
  def: WorkflowVersion,
  limits: StepLimits,
): { final: FinalState } | { final: null; checked: boolean } {
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
  if (!inline.accepts(spec)) return { final: null, checked: false };
  const job = inline.submit(spec, { stepTimeoutsMs: timeouts });
  if (!job) return { final: null, checked: true };
  const outcome = job.outcome;
  const steps = applyOutcome(record.steps, outcome);
  const status = finalStatus(outcome.status, steps);
  // The inline lane ends completed or timed_out (a failing document goes to the pool).
  const error =
    status === "timed_out" || status === "error"
      ? (outcome.error ?? steps.find((s) => s.error)?.error ?? "The run could not finish.")
      : null;
  return {
    final: {
      status,
      steps,
      summary: summarize(steps),
      error,
      startedAt,
      finishedAt: now(),
      durationMs: Math.round(performance.now() - startedMs),
    },
  };
}
