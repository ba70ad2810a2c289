// From a launched run to the pool's job, so the executor keeps only the orchestration: pure, but
// for a cache of each version's job steps.
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

interface JobSteps {
  limits: StepLimits;
  workflowId: number;
  version: number;
  /** The run steps' ids and validators these were built for. */
  ids: number[];
  validators: string[];
  jobSteps: RunJob["steps"];
  timeouts: number[];
}

/**
 * A version's job steps and time limits, built once: versions never change, and a run's steps are
 * its version's (the last ones built are kept per version, checked against the run's steps). The
 * arrays are shared by the jobs of that version; nothing writes to them (the pool and the inline
 * runner read them, a worker gets a copy). ~0.6 µs of a sync run (docs/benchmarks.md).
 */
const built = new WeakMap<WorkflowVersion, JobSteps>();

function stepsOf(
  src: FreshRun | JobSource,
  steps: RunStep[],
  def: WorkflowVersion,
  limits: StepLimits,
): JobSteps {
  const hit = built.get(def);
  if (hit && hit.limits === limits && sameSteps(hit, src, steps)) return hit;
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
  const entry: JobSteps = {
    limits,
    workflowId: src.workflow_id,
    version: src.workflow_version,
    ids: steps.map((s) => s.step_id),
    validators: steps.map((s) => s.validator),
    jobSteps,
    timeouts,
  };
  built.set(def, entry);
  return entry;
}

function sameSteps(e: JobSteps, src: FreshRun | JobSource, steps: RunStep[]): boolean {
  if (e.workflowId !== src.workflow_id || e.version !== src.workflow_version) return false;
  if (e.ids.length !== steps.length) return false;
  for (let i = 0; i < steps.length; i++)
    if (e.ids[i] !== steps[i]!.step_id || e.validators[i] !== steps[i]!.validator) return false;
  return true;
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
  const { jobSteps, timeouts } = stepsOf(src, steps, def, limits);
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
