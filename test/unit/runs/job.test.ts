// buildJob: a version's job steps and time limits are built once and kept (src/runs/job.ts); what
// is kept must be what the run's steps, the version and the limits give.
import { expect, test } from "bun:test";
import { type FreshRun, type StepLimits, buildJob } from "../../../src/runs/job.ts";
import { pendingSteps } from "../../../src/runs/summary.ts";
import { DEFAULT_MAX_FINDINGS } from "../../../src/validators/registry.ts";
import type { WorkflowVersion } from "../../../src/workflows/types.ts";

const version = (workflowId = 1, n = 1): WorkflowVersion => ({
  workflow_id: workflowId,
  version: n,
  slug: "w",
  allowed_file_types: ["JSON"],
  fail_fast: false,
  steps: [
    { id: 10, order: 1, name: "a", validator: "json_schema", is_active: true, config: { timeout_ms: 500 } },
    { id: 11, order: 2, name: "b", validator: "text_rules", is_active: true, config: { max_findings: 7 } },
  ],
});

const LIMITS: StepLimits = { stepTimeoutMs: 1000, stepTimeoutMaxMs: 2000 };

function job(def: WorkflowVersion, stepIds = [10, 11], limits = LIMITS) {
  const steps = pendingSteps(def.steps.filter((s) => stepIds.includes(s.id)));
  const src: FreshRun = {
    id: "r",
    org_id: 1,
    workflow_id: def.workflow_id,
    workflow_version: def.version,
    file_type: "JSON",
    charset: "utf-8",
    filename: null,
    content: new Uint8Array([123, 125]),
    steps,
  };
  return buildJob(src, new Uint8Array([123, 125]), steps, def, false, limits);
}

test("each step's key, validator, config, findings cap and time limit", () => {
  const { job: j, timeouts } = job(version());
  expect(j.steps).toEqual([
    {
      key: "10:1:1",
      validator: "json_schema",
      config: { timeout_ms: 500 },
      maxFindings: DEFAULT_MAX_FINDINGS,
    },
    { key: "11:1:1", validator: "text_rules", config: { max_findings: 7 }, maxFindings: 7 },
  ]);
  expect(timeouts).toEqual([500, 1000]);
});

test("the runs of one version share its steps; another version, other steps or other limits do not", () => {
  const def = version();
  const first = job(def);
  expect(job(def).job.steps).toBe(first.job.steps);
  expect(job(def).timeouts).toBe(first.timeouts);

  const fewer = job(def, [11]);
  expect(fewer.job.steps.map((s) => s.key)).toEqual(["11:1:1"]);
  expect(fewer.timeouts).toEqual([1000]);

  const tight = job(def, [10, 11], { stepTimeoutMs: 100, stepTimeoutMaxMs: 300 });
  expect(tight.timeouts).toEqual([300, 100]);

  const other = job(version(2, 3));
  expect(other.job.steps.map((s) => s.key)).toEqual(["10:2:3", "11:2:3"]);
  // Back to the first shape: built again, equal to the first.
  expect(job(def).job.steps).toEqual(first.job.steps);
});

test("the bytes are copied unless the caller hands over a buffer of its own", () => {
  const def = version();
  const content = new Uint8Array([1, 2, 3]);
  const steps = pendingSteps(def.steps);
  const fresh: FreshRun = {
    id: "r",
    org_id: 1,
    workflow_id: 1,
    workflow_version: 1,
    file_type: "JSON",
    charset: "utf-8",
    filename: null,
    content,
    steps,
  };
  expect(buildJob(fresh, content, steps, def, true, LIMITS).job.bytes).toBe(content.buffer);
  const copied = buildJob(fresh, content, steps, def, false, LIMITS).job.bytes;
  expect(copied).not.toBe(content.buffer);
  expect([...new Uint8Array(copied)]).toEqual([1, 2, 3]);
});
