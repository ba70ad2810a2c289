// Step configs of workflow versions, stored once by content (migration 19). A version's snapshot
// holds every step's config with the stored schemas it references pinned in (src/workflows/
// check.ts), up to 8 MiB a step: written whole into every version, a workflow whose five steps
// import a 7.5 MB XSD grew by ~37 MB on each save, a rename included. Now the snapshot names
// each config by the SHA-256 of its JSON text and the text is written once in step_configs,
// however many steps, versions and workflows share it. Rows are never deleted: versions are kept
// for ever, and a config no version names any more costs its bytes once.
import { sha256 } from "../audit/chain.ts";
import { type Program, all, run } from "../db/program.ts";
import type { StepDef, WorkflowVersion } from "./types.ts";

/** A step as a snapshot stores it: its config by digest (snapshots before migration 19: inline). */
export type StoredStep = Omit<StepDef, "config"> & { config?: StepDef["config"]; config_sha256?: string };

/** Writes the steps' configs (those not stored yet) and returns the steps naming them by digest. */
export function* storeConfigs(steps: StepDef[], ts: string): Program<StoredStep[]> {
  const out: StoredStep[] = [];
  const written = new Set<string>();
  for (const { config, ...step } of steps) {
    const text = JSON.stringify(config);
    const digest = sha256(text);
    if (!written.has(digest)) {
      written.add(digest);
      yield* run(
        "INSERT INTO step_configs (sha256, config, created_at) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
        digest,
        text,
        ts,
      );
    }
    out.push({ ...step, config_sha256: digest });
  }
  return out;
}

/** The snapshot with every step's config in place, as runs, reads and restores use it. */
export function* resolveConfigs(
  def: Omit<WorkflowVersion, "steps"> & { steps: StoredStep[] },
): Program<WorkflowVersion> {
  const wanted = [...new Set(def.steps.flatMap((s) => (s.config_sha256 ? [s.config_sha256] : [])))];
  const found = new Map<string, StepDef["config"]>();
  if (wanted.length) {
    const rows = yield* all<{ sha256: string; config: string }>(
      `SELECT sha256, config FROM step_configs WHERE sha256 IN (${wanted.map(() => "?").join(", ")})`,
      ...wanted,
    );
    for (const r of rows) found.set(r.sha256, JSON.parse(r.config));
  }
  const steps = def.steps.map(({ config_sha256, config, ...step }): StepDef => {
    if (!config_sha256) return { ...step, config: config ?? {} };
    const stored = found.get(config_sha256);
    // A foreign key cannot reach inside the JSON; a snapshot naming a missing config is damage.
    if (!stored) throw new Error(`step config ${config_sha256} of workflow ${def.workflow_id} is missing`);
    return { ...step, config: stored };
  });
  return { ...def, steps };
}
