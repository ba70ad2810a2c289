// The inline lane: a small JSON document whose steps provably validate in time linear in its size
// is checked on the main thread instead of making a round trip to a worker, which costs more than
// such a check: ~75 µs of the one core per run (postMessage on both sides, the worker's wake-up
// and message event) against ~12 µs to parse and check 1 KB, measured (docs/execution.md). A check
// here cannot be interrupted, so only what cannot run away comes here: at most INLINE_MAX_BYTES of
// UTF-8 JSON, steps whose validator vouches for the config (json_schema:
// src/validators/json-schema/bounded.ts), and only the pass/fail half of validation. A document
// that fails a step goes to the pool after all: building its findings is not linear-time.
import { runsInBoundedTime } from "../validators/json-schema/bounded.ts";
import { compileJsonSchemaPassCheck } from "../validators/json-schema/index.ts";
import type { ValidationInput } from "../validators/types.ts";
import { Lru } from "./lru.ts";
import type { RunOutcome, SubmitOptions, SubmittedJob } from "./model.ts";
import type { JobStep, RunJob, StepOutcome } from "./protocol.ts";
import { CONFIG_CACHE_SIZE } from "./worker-loop.ts";

/** Largest document checked inline: a linear-time check of 16 KiB takes well under a millisecond. */
export const INLINE_MAX_BYTES = 16 * 1024;

export type PassCheck = (input: ValidationInput) => boolean;

/** A job the lane ran: done already, its outcome readable without awaiting `done`. */
export interface InlineJob extends SubmittedJob {
  outcome: RunOutcome;
}

/** A validator the lane may run: which configs are safe here, and their pass/fail check. */
export interface InlineValidator {
  bounded(config: unknown): boolean;
  compile(config: unknown): PassCheck;
}

const VALIDATORS: Record<string, InlineValidator> = {
  json_schema: { bounded: runsInBoundedTime, compile: (config) => compileJsonSchemaPassCheck(config) },
};

const decoder = new TextDecoder("utf-8");

export class InlineRunner {
  /** Per step key (one config of one workflow version): its check, or null when not bounded. */
  readonly #checks = new Lru<string, PassCheck | null>(CONFIG_CACHE_SIZE);
  #ran = 0;

  /** `validators`: replaced by tests only, to run fake ones. */
  constructor(readonly validators: Record<string, InlineValidator> = VALIDATORS) {}

  /** Jobs that ended inline since start (the metric assay_jobs_inline_total). */
  get ran(): number {
    return this.#ran;
  }

  accepts(job: RunJob): boolean {
    if (job.fileType !== "JSON" || job.bytes.byteLength > INLINE_MAX_BYTES) return false;
    if (!/^utf-?8$/i.test(job.charset)) return false;
    return job.steps.every((step) => this.#check(step) !== null);
  }

  #check(step: JobStep): PassCheck | null {
    let check = this.#checks.get(step.key);
    if (check === undefined) {
      const v = Object.hasOwn(this.validators, step.validator) ? this.validators[step.validator] : undefined;
      check = v && Object.hasOwn(step, "config") && v.bounded(step.config) ? v.compile(step.config) : null;
      this.#checks.set(step.key, check);
    }
    return check;
  }

  /**
   * Runs the job now when it is accepted and passes every step: its callbacks fire in step order
   * and the returned job is already done. Otherwise returns null and the caller submits it to the
   * pool (the bytes are untouched). A step over its time limit (it cannot be stopped, only judged
   * afterwards) ends the run timed_out, as in a worker.
   */
  submit(job: RunJob, opts: SubmitOptions): InlineJob | null {
    if (!this.accepts(job)) return null;
    const bytes = new Uint8Array(job.bytes);
    const input: ValidationInput = {
      bytes,
      text: decoder.decode(bytes),
      fileType: job.fileType,
      filename: job.filename,
    };
    const outcomes: StepOutcome[] = [];
    let timedOut: string | null = null;
    for (let i = 0; i < job.steps.length; i++) {
      const started = performance.now();
      let passed: boolean;
      try {
        passed = this.#check(job.steps[i])!(input);
      } catch {
        passed = false; // the worker says what went wrong
      }
      if (!passed) return null;
      const durationMs = performance.now() - started;
      const limit = opts.stepTimeoutsMs[i];
      if (Number.isFinite(limit) && durationMs > limit) {
        timedOut = `step exceeded its time limit of ${limit} ms`;
        outcomes.push({
          status: "error",
          findings: [],
          truncated: false,
          durationMs: Math.round(durationMs),
          error: timedOut,
        });
        break;
      }
      outcomes.push({ status: "passed", findings: [], truncated: false, durationMs: Math.round(durationMs) });
    }
    this.#ran++;
    outcomes.forEach((outcome, i) => {
      call(() => opts.onStepStart?.(i));
      call(() => opts.onStepEnd?.(i, outcome));
    });
    const steps = job.steps.map(
      (_, i): StepOutcome =>
        outcomes[i] ?? { status: "skipped", findings: [], truncated: false, durationMs: 0 },
    );
    const outcome: RunOutcome =
      timedOut === null ? { status: "completed", steps } : { status: "timed_out", steps, error: timedOut };
    return { outcome, done: Promise.resolve(outcome), cancel: () => {} };
  }
}

/** The caller's callbacks must not break the run (as in the pool). */
function call(fn: () => void): void {
  try {
    fn();
  } catch {
    // ignored, as the pool does after reporting it
  }
}
