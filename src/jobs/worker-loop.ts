// The body of a validation worker: receive jobs, run each one's steps in order, report each step.
// Pure compute, no database. The validator lookup is injected so tests can run the real loop with
// fake validators (test/unit/jobs/fixtures/test-worker.ts); src/jobs/worker.ts wires the registry.
import { decodeText, decodes, normaliseCharset } from "../runs/intake/charsets.ts";
import { xmlEncoding } from "../runs/intake/filetypes.ts";
import { boundFindings } from "../validators/shared/findings.ts";
import { StepLimitError } from "../validators/limit-error.ts";
import type { CompiledValidator, ValidatorDef } from "../validators/types.ts";
import { HeapCheck } from "./heap.ts";
import { Lru } from "./lru.ts";
import { errorStep, shortError } from "./outcome.ts";
import {
  CLAIM_FREE,
  CLAIM_STARTED,
  type FromWorker,
  type JobStep,
  type RunJob,
  type StepOutcome,
  type ToWorker,
} from "./protocol.ts";

/** May load the validator's module first (src/validators/loader.ts). */
export type ValidatorLookup = (slug: string) => ValidatorDef | undefined | Promise<ValidatorDef | undefined>;

/** Same capacity as the pool's per-worker view (see pool.ts), so both evict alike. */
export const CONFIG_CACHE_SIZE = 256;

/** A config as received, compiled on first use: a skipped step costs no compile. */
interface CacheEntry {
  config: unknown;
  compiled?: CompiledValidator;
}

export interface JobDeps {
  lookup: ValidatorLookup;
  cache: Lru<string, CacheEntry>;
  /** XPath expressions this worker's compiles left in it for good (CompiledValidator.retains). */
  retained?: number;
  post(message: FromWorker): void;
  /** Ask the pool again for a config this worker evicted. */
  requestConfig(jobId: string, key: string): Promise<unknown>;
}

export async function runJob(job: RunJob, deps: JobDeps): Promise<void> {
  const { cache, post } = deps;
  // Touch every step's key in step order, as the pool did when it sent the job.
  for (const step of job.steps) {
    const entry = cache.get(step.key);
    if (!entry && Object.hasOwn(step, "config")) cache.set(step.key, { config: step.config });
  }
  const stored = new Uint8Array(job.bytes);
  let bytes = stored;
  let text: { value: string } | { error: string } | undefined;

  for (let index = 0; index < job.steps.length; index++) {
    const step = job.steps[index];
    const started = performance.now();
    const retained = deps.retained ?? 0;
    let outcome: StepOutcome;
    let validate: CompiledValidator | undefined;
    try {
      validate = await compiled(job.jobId, step, deps);
      // Decode once per job, lazily, so the cost falls inside the first step's time limit.
      if (!text) {
        text = decode(stored, job.charset);
        if ("value" in text) bytes = bytesToRead(stored, text.value, job);
      }
      if ("error" in text) throw new Error(text.error);
      const result = validate(
        {
          bytes,
          text: text.value,
          fileType: job.fileType,
          filename: job.filename,
          ...(bytes === stored ? {} : { stored, charset: job.charset }),
        },
        { maxFindings: step.maxFindings },
      );
      // Cap again here: findings cross the thread boundary, a validator that ignores the limit
      // must not turn into a large message; and bound their size (limits.ts).
      const bounded = boundFindings(result.findings, step.maxFindings);
      const findings = bounded.findings;
      outcome = {
        status: result.error
          ? "error"
          : result.findings.some((f) => f.severity === "error")
            ? "failed"
            : "passed",
        findings,
        truncated: result.truncated || bounded.truncated,
        durationMs: Math.round(performance.now() - started),
        ...(result.error ? { error: shortError(result.error) } : {}),
      };
    } catch (err) {
      // An engine limit is said where findings are read too: the data was not checked.
      const limit = err instanceof StepLimitError;
      outcome = errorStep(shortError(limit ? new Error(err.message) : err), performance.now() - started);
      if (limit) outcome.findings = [err.finding];
    }
    // What the run left besides the compile (a validator's `retains` may grow as it runs), failed or not.
    if (validate) account(validate, deps);
    // Said only when this step's compile or run added to it: the pool may replace this worker (protocol.ts).
    const more = (deps.retained ?? 0) === retained ? {} : { retained: deps.retained };
    // The last step's end is the job's end: one message where there were two (protocol.ts).
    if (index === job.steps.length - 1 || (job.failFast && outcome.status !== "passed")) {
      post({ type: "step_end", jobId: job.jobId, index, outcome, end: true, ...more });
      return;
    }
    post({ type: "step_end", jobId: job.jobId, index, outcome, ...more });
  }
  post({ type: "run_end", jobId: job.jobId });
}

async function compiled(jobId: string, step: JobStep, deps: JobDeps): Promise<CompiledValidator> {
  let entry = deps.cache.get(step.key);
  if (!entry) {
    entry = { config: await deps.requestConfig(jobId, step.key) };
    deps.cache.set(step.key, entry);
  }
  if (!entry.compiled) {
    const def = await deps.lookup(step.validator);
    if (!def) throw new Error(`unknown validator "${step.validator}"`);
    entry.compiled = def.compile(entry.config);
    account(entry.compiled, deps);
  }
  return entry.compiled;
}

/** Each compiled validator's `retains` as last added to JobDeps.retained. */
const counted = new WeakMap<CompiledValidator, number>();

/** Adds what `validate` retains beyond what was counted of it (after its compile, after each run). */
function account(validate: CompiledValidator, deps: JobDeps): void {
  const now = validate.retains ?? 0;
  const before = counted.get(validate) ?? 0;
  if (now <= before) return;
  counted.set(validate, now);
  deps.retained = (deps.retained ?? 0) + now - before;
}

const DECLARED_ENCODING = /^(\uFEFF?<\?xml[^>]*?encoding\s*=\s*["'])[^"']+/;

/**
 * The bytes engines that read bytes (libxml2) get. The submission's charset wins over what the
 * bytes might say (RFC 7303 §3), so they get the text as UTF-8 and an XML declaration naming
 * another encoding, which would now lie, says UTF-8 instead (same line, so positions hold).
 * Otherwise libxml2 would follow the declaration and read `café` as `cafÃ©` where the steps that
 * read the text (Schematron) read `café`.
 */
function bytesToRead(stored: Uint8Array<ArrayBuffer>, text: string, job: RunJob): Uint8Array<ArrayBuffer> {
  const utf8 = (value: string) => new TextEncoder().encode(value);
  if (!/^utf-?8$/i.test(job.charset))
    return utf8(job.fileType === "XML" ? text.replace(DECLARED_ENCODING, "$1UTF-8") : text);
  if (job.fileType !== "XML") return stored;
  // Stored as UTF-8 under a declaration of an encoding the bytes are also in: a charset=utf-8
  // parameter or a JSON envelope's string said so, since without either intake stores the declared
  // encoding (src/runs/intake/modes.ts). Bytes not in the declared encoding, or an encoding the
  // server cannot read, are a document without a charset that intake kept for libxml2 to judge.
  const declared = xmlEncoding(stored);
  const usable = declared === null ? null : normaliseCharset(declared);
  if (usable === null || usable === "utf-8" || !decodes(stored, usable)) return stored;
  return utf8(text.replace(DECLARED_ENCODING, "$1UTF-8"));
}

/** As intake read them: us-ascii and iso-8859-1 are not WHATWG's windows-1252 (charsets.ts). */
function decode(bytes: Uint8Array, charset: string): { value: string } | { error: string } {
  try {
    return { value: decodeText(bytes, charset, false) };
  } catch {
    return { error: `unsupported charset "${charset}"` };
  }
}

/**
 * Input bytes after which a worker collects its garbage. Between jobs a worker allocates nothing,
 * so the collector seldom runs and each large document's decoded text and parsed values outlive
 * their job: +47 MB of heap per 10 MiB JSON job, measured (docs/benchmarks.md). A full collection
 * of that heap takes ~70 ms; for small documents it comes every few thousand jobs.
 */
export const GC_EVERY_BYTES = 4 * 1024 * 1024;

/** Install the message handler on this worker and tell the pool it can take jobs. */
export function startWorkerLoop(lookup: ValidatorLookup, cacheSize = CONFIG_CACHE_SIZE): void {
  // Inside a worker `self` is the worker scope; the DOM lib types it as a Window.
  const scope = self as unknown as Pick<Worker, "postMessage" | "addEventListener">;
  const post = (message: FromWorker) => scope.postMessage(message);
  const cache = new Lru<string, CacheEntry>(cacheSize);
  let awaiting: { jobId: string; key: string; resolve(config: unknown): void } | null = null;
  let sinceGc = 0;
  const heap = new HeapCheck();
  /** Jobs received while another ran (the pool pipelines), in order, each with the pool's heap bound. */
  const waiting: { job: RunJob; maxHeapBytes?: number }[] = [];
  let busy = false;
  let failed = false;

  const deps: JobDeps = {
    lookup,
    cache,
    retained: 0,
    post,
    requestConfig: (jobId, key) =>
      new Promise((resolve) => {
        awaiting = { jobId, key, resolve };
        post({ type: "missing_config", jobId, key });
      }),
  };

  const next = () => {
    let entry = waiting.shift();
    // Taken over by another worker while it waited here (protocol.ts, `claim`): skip it.
    while (
      entry?.job.claim &&
      Atomics.compareExchange(entry.job.claim, 0, CLAIM_FREE, CLAIM_STARTED) !== CLAIM_FREE
    ) {
      post({ type: "dropped", jobId: entry.job.jobId });
      entry = waiting.shift();
    }
    if (!entry || failed) {
      busy = false;
      return;
    }
    busy = true;
    const { job, maxHeapBytes } = entry;
    const size = job.bytes.byteLength;
    runJob(job, deps).then(
      () => {
        // After the job's last message, so its result is not delayed: see GC_EVERY_BYTES.
        sinceGc += size;
        const collect = sinceGc >= GC_EVERY_BYTES;
        if (collect) {
          sinceGc = 0;
          Bun.gc(true);
        }
        // Said before this worker starts its next job: the pool takes back the jobs it has not.
        const kept = heap.after(maxHeapBytes, collect);
        if (kept !== null) post({ type: "heap", bytes: kept });
        // A macrotask hop, not a direct call, even with nothing waiting: messages that came while
        // the job ran (the next `run`, a `drop` for it) are handled before the next job starts.
        setImmediate(next);
      },
      (err) => {
        // A failure of the loop itself (say, a finding that cannot be cloned) leaves this worker
        // in an unknown state: say why; the pool fails the job as crashed and replaces the worker.
        failed = true;
        post({ type: "fatal", message: shortError(err) });
      },
    );
  };

  scope.addEventListener("message", (event: MessageEvent<ToWorker>) => {
    const message = event.data;
    if (message.type === "run") {
      waiting.push({ job: message.job, maxHeapBytes: message.maxHeapBytes });
      if (!busy) next();
    } else if (message.type === "drop") {
      const at = waiting.findIndex((w) => w.job.jobId === message.jobId);
      if (at >= 0) {
        waiting.splice(at, 1);
        post({ type: "dropped", jobId: message.jobId });
      }
    } else if (
      message.type === "config" &&
      awaiting?.jobId === message.jobId &&
      awaiting.key === message.key
    ) {
      const { resolve } = awaiting;
      awaiting = null;
      resolve(message.config);
    }
  });
  post({ type: "ready" });
}
