// From a launched run to the pool's job: pure, so the executor keeps only the orchestration.
import type { RunJob } from "../jobs/protocol.ts";
import { DEFAULT_MAX_FINDINGS } from "../validators/registry.ts";
import type { WorkflowVersion } from "../workflows/types.ts";
import type { JobSource } from "./store.ts";
import type { RunStep } from "./types.ts";

/** A run this process just committed or holds: launched from memory instead of read back. */
export type FreshRun = Omit<JobSource, "status" | "attempts" | "steps" | "created_at"> & { steps: RunStep[] };

export interface StepLimits {
  stepTimeoutMs: number;
  stepTimeoutMaxMs: number;
}

/**
 * The job and each step's time limit. `owned`: the content buffer was read for this run alone and
 * is handed to the pool whole, no copy (10 MiB less for a 10 MiB document); otherwise (a row's
 * buffer, a view into a larger one, bytes kept for a later write) it is copied first, because
 * the pool transfers what it is given.
 */
export function buildJob(
  src: FreshRun | JobSource,
  content: Uint8Array,
  steps: RunStep[],
  def: WorkflowVersion,
  owned: boolean,
  limits: StepLimits,
): { job: RunJob; timeouts: number[] } {
  const byId = new Map(def.steps.map((s) => [s.id, s]));
  const jobSteps = steps.map((s) => {
    const cfg = byId.get(s.step_id)?.config ?? {};
    return {
      key: `${s.step_id}:${src.workflow_id}:${src.workflow_version}`,
      validator: s.validator,
      config: cfg,
      maxFindings: Number(cfg.max_findings ?? DEFAULT_MAX_FINDINGS),
    };
  });
  const timeouts = steps.map((s) =>
    Math.min(Number(byId.get(s.step_id)?.config.timeout_ms ?? limits.stepTimeoutMs), limits.stepTimeoutMaxMs),
  );
  const whole =
    content.byteOffset === 0 &&
    content.byteLength === content.buffer.byteLength &&
    content.buffer instanceof ArrayBuffer;
  const bytes = (owned && whole ? content.buffer : content.slice().buffer) as ArrayBuffer;
  return {
    job: {
      jobId: src.id,
      bytes,
      charset: src.charset,
      fileType: src.file_type,
      filename: src.filename,
      failFast: def.fail_fast,
      steps: jobSteps,
    },
    timeouts,
  };
}
