// SQL for workflows and steps. Every change goes through save(): one transaction that writes
// the settings, reconciles the step list, bumps the version and snapshots the definition that
// runs will execute.
import type { Database } from "bun:sqlite";
import { GenerationCache, deepFreeze, generationOf } from "../db/generation.ts";
import { bool, now, parseJson, uniqueOr } from "../db/util.ts";
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

export function createWorkflowStore(db: Database) {
  const bySlug = db.prepare<WorkflowRow, [number, string]>(
    `${SELECT} WHERE w.org_id = ? AND w.slug = ? AND w.deleted_at IS NULL`,
  );
  const byId = db.prepare<WorkflowRow, [number, number]>(
    `${SELECT} WHERE w.org_id = ? AND w.id = ? AND w.deleted_at IS NULL`,
  );
  const stepsOf = db.prepare<StepRow, [number]>(
    "SELECT * FROM steps WHERE workflow_id = ? ORDER BY position, id",
  );
  const versionSel = db.prepare<{ definition: string }, [number, number]>(
    "SELECT definition FROM workflow_versions WHERE workflow_id = ? AND version = ?",
  );

  // Only found workflows are cached: unknown identifiers cannot fill the cache.
  const found = new GenerationCache<string, Workflow>(generationOf(db), FIND_CACHE_SIZE);
  // A run reads its definition at submission and again at launch: parse each version once.
  const versions = new Map<string, WorkflowVersion>();

  function writeSteps(workflowId: number, steps: WorkflowDraft["steps"], ts: string): StepDef[] {
    const keep = new Set(steps.filter((s) => s.id != null).map((s) => s.id));
    for (const old of stepsOf.all(workflowId))
      if (!keep.has(old.id)) db.query("DELETE FROM steps WHERE id = ?").run(old.id);
    steps.forEach((s, i) => {
      const cfg = JSON.stringify(s.config);
      if (s.id == null) {
        db.query(
          "INSERT INTO steps (workflow_id, position, name, validator, config, is_active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ).run(workflowId, i + 1, s.name, s.validator, cfg, s.is_active ? 1 : 0, ts, ts);
      } else {
        db.query(
          "UPDATE steps SET position = ?, name = ?, validator = ?, config = ?, is_active = ?, updated_at = ? WHERE id = ?",
        ).run(i + 1, s.name, s.validator, cfg, s.is_active ? 1 : 0, ts, s.id);
      }
    });
    return stepsOf.all(workflowId).map(toStep);
  }

  function snapshot(w: WorkflowRow, steps: StepDef[], ts: string) {
    const def: WorkflowVersion = {
      workflow_id: w.id,
      version: w.version,
      slug: w.slug,
      allowed_file_types: parseJson<FileType[]>(w.allowed_file_types, []),
      fail_fast: bool(w.fail_fast),
      steps,
    };
    db.query(
      "INSERT OR REPLACE INTO workflow_versions (workflow_id, version, definition, created_at) VALUES (?, ?, ?, ?)",
    ).run(w.id, w.version, JSON.stringify(def), ts);
    versions.delete(`${w.id}:${w.version}`); // exact even if a version were ever rewritten
  }

  return {
    /**
     * Hot path (every run submission): cached; the workflow is shared and frozen.
     * `generation`: the one the request's authentication read (Principal.generation), if any.
     */
    async find(orgId: number, identifier: string, generation?: number): Promise<Workflow | null> {
      return found.get(
        `${orgId}:${identifier}`,
        () => {
          const r = /^\d{1,15}$/.test(identifier)
            ? (byId.get(orgId, Number(identifier)) ?? bySlug.get(orgId, identifier))
            : bySlug.get(orgId, identifier);
          return r ? deepFreeze(toWorkflow(r)) : null;
        },
        generation,
      );
    },
    async steps(workflowId: number): Promise<StepDef[]> {
      return stepsOf.all(workflowId).map(toStep);
    },
    async list(orgId: number, limit: number, offset: number): Promise<{ count: number; items: Workflow[] }> {
      const count = (
        db
          .query("SELECT count(*) AS n FROM workflows WHERE org_id = ? AND deleted_at IS NULL")
          .get(orgId) as { n: number }
      ).n;
      const rows = db
        .query<WorkflowRow, [number, number, number]>(
          `${SELECT} WHERE w.org_id = CAST(? AS INTEGER) AND w.deleted_at IS NULL ORDER BY w.slug LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
        )
        .all(orgId, limit, offset);
      return { count, items: rows.map(toWorkflow) };
    },
    /** Creates (id null) or replaces a workflow's definition; bumps the version on update. */
    async save(
      orgId: number,
      id: number | null,
      d: WorkflowDraft,
    ): Promise<{ workflow: Workflow; steps: StepDef[] }> {
      return uniqueOr(
        () =>
          db.transaction(() => {
            const ts = now();
            const types = JSON.stringify(d.allowed_file_types);
            const row =
              id == null
                ? db
                    .query<WorkflowRow, (string | number | null)[]>(
                      "INSERT INTO workflows (org_id, slug, name, description, status, allowed_file_types, fail_fast, retention_days, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?) RETURNING *, 0 AS step_count",
                    )
                    .get(
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
                    )!
                : db
                    .query<WorkflowRow, (string | number | null)[]>(
                      "UPDATE workflows SET slug = ?, name = ?, description = ?, status = ?, allowed_file_types = ?, fail_fast = ?, retention_days = ?, version = version + 1, updated_at = ? WHERE id = ? RETURNING *, 0 AS step_count",
                    )
                    .get(
                      d.slug,
                      d.name,
                      d.description,
                      d.status,
                      types,
                      d.fail_fast ? 1 : 0,
                      d.retention_days,
                      ts,
                      id,
                    )!;
            const steps = writeSteps(row.id, d.steps, ts);
            snapshot(row, steps, ts);
            return { workflow: toWorkflow({ ...row, step_count: steps.length }), steps };
          })(),
        slugTaken(d.slug),
        "slug",
      );
    },
    async softDelete(id: number): Promise<void> {
      db.query("UPDATE workflows SET deleted_at = ? WHERE id = ?").run(now(), id);
    },
    /** The definition runs execute; shared and frozen (never mutate it). */
    async version(workflowId: number, version: number): Promise<WorkflowVersion | null> {
      const key = `${workflowId}:${version}`;
      const hit = versions.get(key);
      if (hit) return hit;
      const r = versionSel.get(workflowId, version);
      const def = r ? parseJson<WorkflowVersion | null>(r.definition, null) : null;
      if (!def) return null;
      if (versions.size >= VERSION_CACHE_SIZE) versions.delete(versions.keys().next().value!);
      versions.set(key, deepFreeze(def));
      return def;
    },
  };
}
export type WorkflowStore = ReturnType<typeof createWorkflowStore>;
