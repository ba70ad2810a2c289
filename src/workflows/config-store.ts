// Step configs of workflow versions, stored once by content (migration 19). A version's snapshot
// holds every step's config with the stored schemas it references pinned in (src/workflows/
// check.ts), up to 8 MiB a step: written whole into every version, a workflow whose five steps
// import a 7.5 MB XSD grew by ~37 MB on each save, a rename included. Now the snapshot names
// each config by the SHA-256 of its JSON text and the text is written once in step_configs,
// however many steps, versions and workflows share it. The pinned documents inside a config are
// stored apart, once each by their own digest (migration 21, pinned-documents.ts): a config that
// differs only in what its author wrote costs that, not its pinned documents again. Rows are
// never deleted: versions are kept for ever, and a config or document no version names any more
// costs its bytes once.
import { sha256 } from "../audit/chain.ts";
import { type Program, all, run } from "../db/program.ts";
import { joinPinned, pinnedDigests, splitPinned } from "./pinned-documents.ts";
import type { StepDef, WorkflowVersion } from "./types.ts";

/** A step as a snapshot stores it: its config by digest (snapshots before migration 19: inline). */
export type StoredStep = Omit<StepDef, "config"> & { config?: StepDef["config"]; config_sha256?: string };

/** Keys per `IN (…)`: far below both engines' limits on parameters. */
const KEYS_PER_QUERY = 500;

function* existing(table: "step_configs" | "pinned_documents", keys: string[]): Program<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < keys.length; i += KEYS_PER_QUERY) {
    const part = keys.slice(i, i + KEYS_PER_QUERY);
    const rows = yield* all<{ sha256: string }>(
      `SELECT sha256 FROM ${table} WHERE sha256 IN (${part.map(() => "?").join(", ")})`,
      ...part,
    );
    for (const r of rows) found.add(r.sha256);
  }
  return found;
}

/**
 * Writes the steps' configs and their pinned documents (those not stored yet) and returns the
 * steps naming their configs by digest. A config's digest is that of its whole JSON text, pinned
 * documents in (as before migration 21: the snapshots written before name configs so).
 */
export function* storeConfigs(steps: StepDef[], ts: string): Program<StoredStep[]> {
  const out: StoredStep[] = [];
  const configs = new Map<string, Record<string, unknown>>();
  for (const { config, ...step } of steps) {
    const digest = sha256(JSON.stringify(config));
    configs.set(digest, config);
    out.push({ ...step, config_sha256: digest });
  }
  const stored = yield* existing("step_configs", [...configs.keys()]);
  const rows: [string, string][] = [];
  const documents = new Map<string, string>();
  for (const [digest, config] of configs) {
    if (stored.has(digest)) continue;
    const split = splitPinned(config);
    rows.push([digest, JSON.stringify(split.config)]);
    for (const [d, text] of split.documents) documents.set(d, text);
  }
  // Only the documents not stored yet are sent: a save of a changed config sends its own bytes.
  const have = yield* existing("pinned_documents", [...documents.keys()]);
  for (const [d, text] of documents)
    if (!have.has(d))
      yield* run(
        "INSERT INTO pinned_documents (sha256, body, created_at) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
        d,
        text,
        ts,
      );
  for (const [digest, text] of rows)
    yield* run(
      "INSERT INTO step_configs (sha256, config, created_at) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
      digest,
      text,
      ts,
    );
  return out;
}

function* byDigest(
  table: "step_configs" | "pinned_documents",
  column: "config" | "body",
  keys: string[],
): Program<Map<string, unknown>> {
  const found = new Map<string, unknown>();
  for (let i = 0; i < keys.length; i += KEYS_PER_QUERY) {
    const part = keys.slice(i, i + KEYS_PER_QUERY);
    const rows = yield* all<{ sha256: string; text: string }>(
      `SELECT sha256, ${column} AS text FROM ${table} WHERE sha256 IN (${part.map(() => "?").join(", ")})`,
      ...part,
    );
    for (const r of rows) found.set(r.sha256, JSON.parse(r.text));
  }
  return found;
}

/** The snapshot with every step's config in place, as runs, reads and restores use it. */
export function* resolveConfigs(
  def: Omit<WorkflowVersion, "steps"> & { steps: StoredStep[] },
): Program<WorkflowVersion> {
  const wanted = [...new Set(def.steps.flatMap((s) => (s.config_sha256 ? [s.config_sha256] : [])))];
  const configs = yield* byDigest("step_configs", "config", wanted);
  const named = new Set<string>();
  for (const c of configs.values()) for (const d of pinnedDigests(c as StepDef["config"])) named.add(d);
  // Parsed once, shared by the steps that pin the same document (the snapshot is frozen).
  const documents = yield* byDigest("pinned_documents", "body", [...named]);
  const what = `workflow ${def.workflow_id}`;
  const steps = def.steps.map(({ config_sha256, config, ...step }): StepDef => {
    if (!config_sha256) return { ...step, config: config ?? {} };
    const stored = configs.get(config_sha256) as StepDef["config"] | undefined;
    // A foreign key cannot reach inside the JSON; a snapshot naming a missing config is damage.
    if (!stored) throw new Error(`step config ${config_sha256} of ${what} is missing`);
    return { ...step, config: joinPinned(stored, documents, what) };
  });
  return { ...def, steps };
}
