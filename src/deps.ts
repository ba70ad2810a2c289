// The services of one Assay instance, built once from config and an open database. Routes and
// the CLI receive this object; nothing reads globals.
import type { AnyDb } from "./db/open.ts";
import { type Config, TEST_GATES_ENV, queuePerOrg } from "./config.ts";
import { MAX_YAML_BYTES_ENV } from "./validators/yaml-limit.ts";
import { MAX_SCHEMATRON_ELEMENTS_ENV } from "./validators/schematron/element-limit.ts";
import type { Logger } from "./lib/log.ts";
import { WorkerPool } from "./jobs/pool.ts";
import { memoryLimitBytes } from "./jobs/memory.ts";
import { createOrgStore } from "./orgs/store.ts";
import { InlineRunner } from "./jobs/inline.ts";
import { createExecutor } from "./runs/executor.ts";
import { createIdempotencyStore } from "./runs/idempotency.ts";
import { createIntakeRunner } from "./runs/intake/offload.ts";
import { createRunService } from "./runs/service.ts";
import { createRunStore } from "./runs/store.ts";
import type { WriterThread } from "./db/writer.ts";
import { createSchemaService } from "./schemas/service.ts";
import { createSchemaStore } from "./schemas/store.ts";
import { createSettingsService } from "./settings/service.ts";
import { createSetupService } from "./setup/service.ts";
import { createSetupStore } from "./setup/store.ts";
import { createSettingsStore } from "./settings/store.ts";
import { createTokenService } from "./tokens/service.ts";
import { createTokenStore } from "./tokens/store.ts";
import { createUserStore } from "./users/store.ts";
import { createWebhooks } from "./webhooks/setup.ts";
import { createDraftChecker } from "./workflows/check-thread.ts";
import { createWorkflowService } from "./workflows/service.ts";
import { createWorkflowStore } from "./workflows/store.ts";
import { createVersionStore } from "./workflows/version-store.ts";
import { createVersionService } from "./workflows/versions.ts";
import { createTestHold } from "./validators/test-hold/index.ts";

export interface DepsOptions {
  /** The validation worker entry; omitted by CLI commands that run no validation. */
  workerUrl?: URL | string;
  /** The intake thread's entry (large run requests); without it every request is read in place. */
  intakeWorkerUrl?: URL | string;
  /** The workflow check thread's entry (heavy drafts); without it every draft is checked in place. */
  checkWorkerUrl?: URL | string;
  /** SQLite's writer thread (src/db/writer.ts): the final sync runs are committed there. */
  writer?: WriterThread | null;
}

export function createDeps(config: Config, db: AnyDb, log: Logger, opts: DepsOptions = {}) {
  const users = createUserStore(db);
  const orgs = createOrgStore(db);
  const tokenStore = createTokenStore(db);
  const settings = createSettingsService(createSettingsStore(db));
  const workflowStore = createWorkflowStore(db);
  const schemaStore = createSchemaStore(db);
  const runs = createRunStore(db, opts.writer ?? null, config.commit_window_us / 1000);
  const idempotency = createIdempotencyStore(db);
  // Test servers only (config.test_gates_dir): the `test_hold` validator, in this instance's
  // save-time checks and in its workers, whose environment says so or not whatever this process's
  // says (several servers share a test process).
  const extraValidators = config.test_gates_dir ? [createTestHold(config.test_gates_dir)] : [];
  const { [TEST_GATES_ENV]: _inherited, ...env } = process.env as Record<string, string>;
  const workerEnv: Record<string, string> = {
    ...env,
    ...(config.test_gates_dir ? { [TEST_GATES_ENV]: config.test_gates_dir } : {}),
    // A flag's value too, not only the environment's.
    [MAX_YAML_BYTES_ENV]: String(config.max_yaml_bytes),
    [MAX_SCHEMATRON_ELEMENTS_ENV]: String(config.max_schematron_elements),
  };
  // The CLI's admin commands need no workers: a pool is only started for the server.
  const pool = opts.workerUrl
    ? new WorkerPool({
        size: config.workers,
        workerUrl: opts.workerUrl,
        workerEnv,
        runTimeoutMs: config.run_timeout_ms,
        memoryLimitBytes: memoryLimitBytes(config.memory_limit_mb),
        maxHeapBytes: config.worker_max_heap_mb * 1048576,
        onEvent: (e) => {
          if (e.type === "worker_exit" && e.reason === "memory")
            log.warn("a step was stopped: the server's memory passed its limit", { job: e.jobId });
          else log.debug("pool", e as unknown as Record<string, unknown>);
        },
      })
    : null;
  const executor = pool
    ? createExecutor(runs, workflowStore, pool, log, {
        stepTimeoutMs: config.step_timeout_ms,
        stepTimeoutMaxMs: config.step_timeout_max_ms,
        maxAttempts: config.max_attempts,
        node: config.node_id ?? "node",
        leaseMs: config.run_lease_ms,
        shared: db.dialect === "postgres",
        inline: config.inline_jobs ? new InlineRunner() : null,
      })
    : null;
  const intake = createIntakeRunner({ workerUrl: opts.intakeWorkerUrl ?? null, log });
  const draftChecker = createDraftChecker({
    workerUrl: opts.checkWorkerUrl ?? null,
    timeoutMs: config.check_timeout_ms,
    log,
  });
  const runService = executor
    ? createRunService({
        runs,
        workflows: workflowStore,
        idempotency,
        executor,
        intake,
        limits: {
          maxPayloadBytes: config.max_payload_bytes,
          maxMetadataBytes: config.max_metadata_bytes,
          maxQueue: config.max_queue,
          maxQueuePerOrg: queuePerOrg(config),
        },
        extraValidators,
      })
    : null;
  const hooks = createWebhooks(config, db, log, { runs, workflows: workflowStore, executor });
  return {
    webhooks: hooks.service,
    webhookDispatcher: hooks.dispatcher,
    runs,
    idempotency,
    intake,
    draftChecker,
    pool,
    executor: executor!,
    runService: runService!,
    config,
    db,
    log,
    users,
    orgs,
    tokenStore,
    settings,
    tokens: createTokenService(tokenStore, users, settings),
    setup: createSetupService(createSetupStore(db)),
    workflowStore,
    workflows: createWorkflowService(
      workflowStore,
      schemaStore,
      extraValidators,
      draftChecker,
      config.max_workflows_per_org,
    ),
    versions: createVersionService(workflowStore, createVersionStore(db), draftChecker, extraValidators),
    schemaStore,
    schemas: createSchemaService(schemaStore, config.max_schemas_per_org),
  };
}
export type Deps = ReturnType<typeof createDeps>;
