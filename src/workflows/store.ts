// SQL for workflows and steps. Every change goes through save(): one transaction that writes
// the settings, reconciles the step list, bumps the version and snapshots the definition that
// runs will execute.
import { GenerationCache, deepFreeze } from "../db/generation.ts";
import { type Db, type Program, all, count, get, run } from "../db/program.ts";
import { bool, now, parseJson, uniqueOrAsync } from "../db/util.ts";
import type { FileType } from "../validators/types.ts";
import type { StepDef, Workflow, WorkflowDraft, WorkflowVersion } from "./types.ts";

interface WorkflowRow {
  id: number;
  org_id: number;
  slug: string;
  name: string;
  description: string;
  status: "active" | "inactive";
  allowed_file_types: string;
  fail_fast: number;
  retention_days: number | null;
  version: number;
  created_at: string;
  updated_at: string;
  step_count: number;
}
interface StepRow {
  id: number;
  position: number;
  name: string;
  validator: string;
  config: string;
  is_active: number;
}

const toWorkflow = (r: WorkflowRow): Workflow => ({
  ...r,
  allowed_file_types: parseJson<FileType[]>(r.allowed_file_types, []),
  fail_fast: bool(r.fail_fast),
});
const toStep = (r: StepRow): StepDef => ({
  id: r.id,
  order: r.position,
  name: r.name,
  validator: r.validator,
  is_active: bool(r.is_active),
  config: parseJson<Record<string, unknown>>(r.config, {}),
});

/** Parsed version definitions kept in memory; versions are immutable, so entries never go stale. */
const VERSION_CACHE_SIZE = 512;
/** Workflows by (org, slug or id), kept while no workflow changes (src/db/generation.ts). */
const FIND_CACHE_SIZE = 1024;

const SELECT = `SELECT w.*, (SELECT count(*) FROM steps s WHERE s.workflow_id = w.id) AS step_count FROM workflows w`;
const slugTaken = (slug: string) => `A workflow with the slug "${slug}" already exists in this organization.`;

const stepsOf = (workflowId: number) =>
  all<StepRow>("SELECT * FROM steps WHERE workflow_id = ? ORDER BY position, id", workflowId);

function* writeSteps(workflowId: number, steps: WorkflowDraft["steps"], ts: string): Program<StepDef[]> {
  const keep = new Set(steps.filter((s) => s.id != null).map((s) => s.id));
  for (const old of yield* stepsOf(workflowId))
    if (!keep.has(old.id)) yield* run("DELETE FROM steps WHERE id = ?", old.id);
  for (const [i, s] of steps.entries()) {
    const cfg = JSON.stringify(s.config);
    if (s.id == null)
      yield* run(
        "INSERT INTO steps (workflow_id, position, name, validator, config, is_active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        workflowId,
        i + 1,
        s.name,
        s.validator,
        cfg,
        s.is_active ? 1 : 0,
        ts,
        ts,
      );
    else
      yield* run(
        "UPDATE steps SET position = ?, name = ?, validator = ?, config = ?, is_active = ?, updated_at = ? WHERE id = ?",
        i + 1,
        s.name,
        s.validator,
        cfg,
        s.is_active ? 1 : 0,
        ts,
        s.id,
      );
  }
  return (yield* stepsOf(workflowId)).map(toStep);
}

function* snapshot(w: WorkflowRow, steps: StepDef[], ts: string): Program<void> {
  const def: WorkflowVersion = {
    workflow_id: w.id,
    version: w.version,
    slug: w.slug,
    allowed_file_types: parseJson<FileType[]>(w.allowed_file_types, []),
    fail_fast: bool(w.fail_fast),
    steps,
  };
  yield* run(
    "INSERT INTO workflow_versions (workflow_id, version, definition, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (workflow_id, version) DO UPDATE SET definition = excluded.definition, created_at = excluded.created_at",
    w.id,
    w.version,
    JSON.stringify(def),
    ts,
  );
}

export function createWorkflowStore(db: Db) {
  // Only found workflows are cached: unknown identifiers cannot fill the cache.
  const found = new GenerationCache<string, Workflow>(db, FIND_CACHE_SIZE);
  // A run reads its definition at submission and again at launch: parse each version once.
  const versions = new Map<string, WorkflowVersion>();

  return {
    /**
     * Hot path (every run submission): cached; the workflow is shared and frozen.
     * `generation`: the one the request's authentication read (Principal.generation), if any.
     */
    async find(orgId: number, identifier: string, generation?: number): Promise<Workflow | null> {
      return found.get(
        `${orgId}:${identifier}`,
        function* () {
          const bySlug = () =>
            get<WorkflowRow>(
              `${SELECT} WHERE w.org_id = ? AND w.slug = ? AND w.deleted_at IS NULL`,
              orgId,
              identifier,
            );
          const r = /^\d{1,15}$/.test(identifier)
            ? ((yield* get<WorkflowRow>(
                `${SELECT} WHERE w.org_id = ? AND w.id = ? AND w.deleted_at IS NULL`,
                orgId,
                Number(identifier),
              )) ?? (yield* bySlug()))
            : yield* bySlug();
          return r ? deepFreeze(toWorkflow(r)) : null;
        },
        generation,
      );
    },
    async steps(workflowId: number): Promise<StepDef[]> {
      return (await db.exec(stepsOf(workflowId))).map(toStep);
    },
    async list(orgId: number, limit: number, offset: number): Promise<{ count: number; items: Workflow[] }> {
      return db.exec(
        (function* () {
          const n = yield* count(
            "SELECT count(*) AS n FROM workflows WHERE org_id = ? AND deleted_at IS NULL",
            orgId,
          );
          const rows = yield* all<WorkflowRow>(
            `${SELECT} WHERE w.org_id = CAST(? AS INTEGER) AND w.deleted_at IS NULL ORDER BY w.slug LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
            orgId,
            limit,
            offset,
          );
          return { count: n, items: rows.map(toWorkflow) };
        })(),
      );
    },
    /** Creates (id null) or replaces a workflow's definition; bumps the version on update. */
    async save(
      orgId: number,
      id: number | null,
      d: WorkflowDraft,
    ): Promise<{ workflow: Workflow; steps: StepDef[] }> {
      return uniqueOrAsync(
        db.tx(function* () {
          const ts = now();
          const types = JSON.stringify(d.allowed_file_types);
          const row =
            id == null
              ? yield* get<WorkflowRow>(
                  "INSERT INTO workflows (org_id, slug, name, description, status, allowed_file_types, fail_fast, retention_days, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?) RETURNING *, 0 AS step_count",
                  orgId,
                  d.slug,
                  d.name,
                  d.description,
                  d.status,
                  types,
                  d.fail_fast ? 1 : 0,
                  d.retention_days,
                  ts,
                  ts,
                )
              : yield* get<WorkflowRow>(
                  "UPDATE workflows SET slug = ?, name = ?, description = ?, status = ?, allowed_file_types = ?, fail_fast = ?, retention_days = ?, version = version + 1, updated_at = ? WHERE id = ? RETURNING *, 0 AS step_count",
                  d.slug,
                  d.name,
                  d.description,
                  d.status,
                  types,
                  d.fail_fast ? 1 : 0,
                  d.retention_days,
                  ts,
                  id,
                );
          const steps = yield* writeSteps(row!.id, d.steps, ts);
          yield* snapshot(row!, steps, ts);
          versions.delete(`${row!.id}:${row!.version}`); // exact even if a version were ever rewritten
          return { workflow: toWorkflow({ ...row!, step_count: steps.length }), steps };
        }),
        slugTaken(d.slug),
        "slug",
      );
    },
    async softDelete(id: number): Promise<void> {
      await db.exec(run("UPDATE workflows SET deleted_at = ? WHERE id = ?", now(), id));
    },
    /** The definition runs execute; shared and frozen (never mutate it). */
    async version(workflowId: number, version: number): Promise<WorkflowVersion | null> {
      const key = `${workflowId}:${version}`;
      const hit = versions.get(key);
      if (hit) return hit;
      const r = await db.exec(
        get<{ definition: string }>(
          "SELECT definition FROM workflow_versions WHERE workflow_id = ? AND version = ?",
          workflowId,
          version,
        ),
      );
      const def = r ? parseJson<WorkflowVersion | null>(r.definition, null) : null;
      if (!def) return null;
      if (versions.size >= VERSION_CACHE_SIZE) versions.delete(versions.keys().next().value!);
      versions.set(key, deepFreeze(def));
      return def;
    },
  };
}
export type WorkflowStore = ReturnType<typeof createWorkflowStore>;
