// Shared by the pool tests: jobs for the fake validators of fixtures/test-worker.ts, pools that
// the test file closes after each test (afterEach(closePools)).
import type { PoolEvent, SubmitOptions } from "../../../src/jobs/pool.ts";
import { WorkerPool } from "../../../src/jobs/pool.ts";
import type { RunJob } from "../../../src/jobs/protocol.ts";

export const TEST_WORKER = new URL("./fixtures/test-worker.ts", import.meta.url);
/** The test worker deaf to `drop`: runs a job the pool canceled after sending it. */
export const DEAF_WORKER = new URL("./fixtures/deaf-worker.ts", import.meta.url);

export type StepSpec = [validator: string, config?: Record<string, unknown>, key?: string];

let seq = 0;
export function makeJob(text: string, specs: StepSpec[], failFast = true): RunJob {
  const jobId = `job-${++seq}`;
  return {
    jobId,
    bytes: new TextEncoder().encode(text).buffer as ArrayBuffer,
    charset: "utf-8",
    fileType: "TEXT",
    filename: null,
    failFast,
    steps: specs.map(([validator, config = {}, key], i) => ({
      key: key ?? `${jobId}:${i}`,
      validator,
      config,
      maxFindings: 10,
    })),
  };
}

export function limits(job: RunJob, ms = 5000, extra: Partial<SubmitOptions> = {}): SubmitOptions {
  return { stepTimeoutsMs: job.steps.map(() => ms), ...extra };
}

/** What the `echo` fake saw, decoded from its finding. */
export function echoed(
  outcome: { steps: { findings: { message: string; path: string | null }[] }[] },
  step = 0,
) {
  const f = outcome.steps[step].findings[0];
  return { ...JSON.parse(f.message), text: f.path } as {
    tag?: string;
    text: string;
    workerId: string;
    configsReceived: number;
    compiles: number;
    validations: number;
  };
}

export const pools: WorkerPool[] = [];
type PoolExtra = {
  maxQueue?: number;
  jobsPerWorker?: number;
  runTimeoutMs?: number;
  onEvent?: (e: PoolEvent) => void;
  workerUrl?: URL;
  memoryLimitBytes?: number;
  memoryProbe?: () => number;
};
export async function startPool(size: number, extra: PoolExtra = {}) {
  const pool = new WorkerPool({ size, workerUrl: TEST_WORKER, ...extra });
  pools.push(pool);
  await pool.ready();
  return pool;
}
export async function closePools() {
  await Promise.all(pools.splice(0).map((p) => p.close(0)));
}

/** Submit and resolve once the given step has started in a worker. */
export function submitAndWaitStart(pool: WorkerPool, job: RunJob, opts: SubmitOptions, index = 0) {
  const started = Promise.withResolvers<void>();
  const handle = pool.submit(job, {
    ...opts,
    onStepStart: (i) => (i === index ? started.resolve() : undefined),
  });
  return { handle, started: started.promise };
}
