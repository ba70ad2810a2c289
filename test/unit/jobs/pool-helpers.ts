// Shared by the pool tests: jobs for the fake validators of fixtures/test-worker.ts, pools that
// the test file closes after each test (afterEach(closePools)).
import { afterEach } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PoolEvent, SubmitOptions } from "../../../src/jobs/pool.ts";
import { WorkerPool } from "../../../src/jobs/pool.ts";
import type { RunJob } from "../../../src/jobs/protocol.ts";
import { testTempDir } from "../../helpers/temp.ts";

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
  maxRetained?: number;
  maxHeapBytes?: number;
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

/**
 * Files the `gate` fake waits for (a test ends a job by opening its gate) and writes as it starts
 * (`mark`). `wait` blocks this thread until a file exists: the pool hears no worker meanwhile,
 * so a test can hold the pool's view still while a worker moves on. Call at a file's top level.
 */
export function gateFiles() {
  let dir = "";
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = "";
  });
  const path = (name: string) => {
    dir ||= testTempDir("assay-pool-gates-");
    return join(dir, name);
  };
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return {
    path,
    open: (name: string) => writeFileSync(path(name), ""),
    wait: (name: string) => {
      while (!existsSync(path(name))) Atomics.wait(pause, 0, 0, 2);
    },
  };
}
