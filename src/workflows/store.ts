// SQL for workflows and steps. Every change goes through save(): one transaction that writes
// the settings, reconciles the step list, bumps the version and snapshots the definition that
// runs will execute.
import { audit } from "../audit/append.ts";
import type { Actor } from "../audit/types.ts";
import { GenerationCache, deepFreeze } from "../db/generation.ts";
import { type Db, countedPage, type Program, ReferenceGone, all, count, get, run } from "../db/program.ts";
import { bool, now, parseJson, uniqueOrAsync } from "../db/util.ts";
import type { FileType } from "../validators/types.ts";
import { lockForRename, renameInFilters } from "../webhooks/store.ts";
import { workflowRecord } from "./audit.ts";
import { resolveConfigs, storeConfigs } from "./config-store.ts";
import type { StepDef, Workflow, WorkflowDraft, WorkflowVersion } from "./types.ts";

/** Who saves, and what the audit log calls it (workflow.update, step.create, workflow.restore …). */
export interface SaveHow {
  actor: Actor;
  action: string;
  /** The version a restore copied (workflow_versions.restored_from). */
  restoredFrom?: number;
  /** The author's user is gone: the version records the name only (store.save). */
  withoutAuthor?: boolean;
  /** A new workflow: WorkflowLimit when the org already has this many live ones. */
  maxLive?: number;
}

/** What a version records as its author: a user's name, or the CLI and the account that ran it. */
export const authorName = (a: Actor): string | null =>
  a.type === "cli" ? `assay CLI${a.username ? ` (${a.username})` : ""}` : a.username;

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
  deleted_at: string | null;
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
/**
 * save() was given the version its caller read, and the workflow is no longer there: another
 * save moved it on, or it was deleted. The caller reads it again (fresh.ts).
 */
export class StaleWorkflow extends Error {
  override name = "StaleWorkflow";
}

/** A new workflow in an org that already has its most (SaveHow.maxLive): nothing written. */
export class WorkflowLimit extends Error {
  override name = "WorkflowLimit";
}

/** Test hooks: beforeSave runs just before save()'s transaction, after the caller's check. */
export interface StoreHooks {
  beforeSave?: () => Promise<void>;
  /** Runs just before softDelete()'s transaction, after the caller's If-Match check. */
  beforeDelete?: () => Promise<void>;
}

const slugTaken = (slug: string) => `A workflow with the slug "${slug}" already exists in this organization.`;

const stepsOf = (workflowId: number) =>
  all<StepRow>("SELECT * FROM steps WHERE workflow_id = ? ORDER BY position, id", workflowId);

function* writeSteps(workflowId: number, steps: WorkflowDraft["steps"], ts: string): Program<StepDef[]> {
  const keep = new Set(steps.filter((s) => s.id != null).map((s) => s.id));
  for (const old of yield* stepsOf(workflowId))
    if (!keep.has(old.id)) yield* run("DELETE FROM steps WHERE id = ?", old.id);
  for (const [i, s] of steps.entries()) {
    const cfg = JSON.stringify(s.config);
    // A restored step takes its old id back when no step holds it: versions then compare by id.
    const revive =
      s.id == null && s.revive != null && !(yield* get("SELECT id FROM steps WHERE id = ?", s.revive))
        ? s.revive
        : null;
    if (revive != null)
      yield* run(
        "INSERT INTO steps (id, workflow_id, position, name, validator, config, is_active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        revive,
        workflowId,
        i + 1,
        s.name,
        s.validator,
        cfg,
        s.is_active ? 1 : 0,
        ts,
        ts,
      );
    else if (s.id == null)
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

/** Writes the version's snapshot; returns its definition text (the audit entry hashes it). */
function* snapshot(w: WorkflowRow, steps: StepDef[], ts: string, how: SaveHow): Program<string> {
  const def: WorkflowVersion = {
    workflow_id: w.id,
    version: w.version,
    slug: w.slug,
    name: w.name,
    description: w.description,
    status: w.status,
    retention_days: w.retention_days,
    allowed_file_types: parseJson<FileType[]>(w.allowed_file_types, []),
    fail_fast: bool(w.fail_fast),
    steps,
  };
  // The audit entry hashes the whole definition; the row names the configs (config-store.ts).
  const text = JSON.stringify(def);
  const stored = JSON.stringify({ ...def, steps: yield* storeConfigs(steps, ts) });
  yield* run(
    `INSERT INTO workflow_versions (workflow_id, version, definition, created_at, created_by, created_by_name, restored_from, step_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (workflow_id, version) DO UPDATE SET definition = excluded.definition, created_at = excluded.created_at, created_by = excluded.created_by, created_by_name = excluded.created_by_name, restored_from = excluded.restored_from, step_count = excluded.step_count`,
    w.id,
    w.version,
    stored,
    ts,
    how.withoutAuthor ? null : how.actor.user_id,
    authorName(how.actor),
    how.restoredFrom ?? null,
    steps.length,
  );
  return text;
}

export function createWorkflowStore(db: Db) {
  const liveCount = (orgId: number) =>
    count("SELECT count(*) AS n FROM workflows WHERE org_id = ? AND deleted_at IS NULL", orgId);
  // Only found workflows are cached: unknown identifiers cannot fill the cache.
  const found = new GenerationCache<string, Workflow>(db, FIND_CACHE_SIZE);
  // A run reads its definition at submission and again at launch: parse each version once.
  const versions = new Map<string, WorkflowVersion>();
  const hooks: StoreHooks = {};

  return {
    hooks,
    /** The org's workflows not deleted. */
    countLive: (orgId: number): Promise<number> => db.exec(liveCount(orgId)),
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
      const { count: n, rows } = await countedPage<WorkflowRow>(db, {
        count: "SELECT count(*) AS n FROM workflows WHERE org_id = CAST(? AS INTEGER) AND deleted_at IS NULL",
        countParams: [orgId],
        page: `${SELECT} WHERE w.org_id = CAST(? AS INTEGER) AND w.deleted_at IS NULL ORDER BY w.slug LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
        pageParams: [orgId, limit, offset],
        order: "p.slug",
        key: "id",
      });
      return { count: n, items: rows.map(toWorkflow) };
    },
    /**
     * Creates (id null) or replaces a workflow's definition; bumps the version on update. The
     * version's snapshot and the audit entry are written in the same transaction. `expected`:
     * the version the draft was made from; when the live workflow is at another one or deleted,
     * nothing is written and StaleWorkflow is thrown (the draft would undo the other change).
     */
    async save(
      orgId: number,
      id: number | null,
      d: WorkflowDraft,
      how: SaveHow,
      expected?: number,
    ): Promise<{ workflow: Workflow; steps: StepDef[] }> {
      await hooks.beforeSave?.();
      try {
        return await write(how);
      } catch (e) {
        // The author's user deleted while this ran (workflow_versions.created_by): saved without
        // the id, as the deletion leaves the user's earlier versions (ON DELETE SET NULL).
        if (e instanceof ReferenceGone && !how.withoutAuthor) return write({ ...how, withoutAuthor: true });
        throw e;
      }
      function write(how: SaveHow) {
        return uniqueOrAsync(
          db.tx(function* () {
            const ts = now();
            const types = JSON.stringify(d.allowed_file_types);
            const old = id == null ? null : yield* get<WorkflowRow>(`${SELECT} WHERE w.id = ?`, id);
            if (expected !== undefined && (old?.version !== expected || old.deleted_at != null))
              throw new StaleWorkflow();
            const oldSteps = old ? (yield* stepsOf(old.id)).map(toStep) : [];
            // Before the row is written: webhook writes take the org's row first too.
            if (old && old.slug !== d.slug) yield* lockForRename(db.dialect, orgId);
            if (id == null && how.maxLive !== undefined) {
              // The org's row, locked (PostgreSQL): two creations racing for the last place
              // cannot both pass the count.
              yield* lockForRename(db.dialect, orgId);
              if ((yield* liveCount(orgId)) >= how.maxLive) throw new WorkflowLimit();
            }
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
                    "UPDATE workflows SET slug = ?, name = ?, description = ?, status = ?, allowed_file_types = ?, fail_fast = ?, retention_days = ?, version = version + 1, updated_at = ? WHERE id = ? AND version = ? AND deleted_at IS NULL RETURNING *, 0 AS step_count",
                    d.slug,
                    d.name,
                    d.description,
                    d.status,
                    types,
                    d.fail_fast ? 1 : 0,
                    d.retention_days,
                    ts,
                    id,
                    // Checked again here: on PostgreSQL another transaction may have committed
                    // since the SELECT above, and this UPDATE waited for it, then saw its row.
                    expected ?? old?.version ?? 0,
                  );
            if (!row) throw new StaleWorkflow();
            if (old && old.slug !== row!.slug)
              yield* renameInFilters(how.actor, orgId, row!.id, old.slug, row!.slug);
            const steps = yield* writeSteps(row!.id, d.steps, ts);
            const definition = yield* snapshot(row!, steps, ts, how);
            versions.delete(`${row!.id}:${row!.version}`); // exact even if a version were ever rewritten
            const workflow = toWorkflow({ ...row!, step_count: steps.length });
            yield* audit(how.actor, {
              action: how.action,
              org_id: orgId,
              target_type: "workflow",
              target_id: workflow.id,
              target_name: workflow.slug,
              before: old ? workflowRecord(toWorkflow(old), oldSteps, null) : null,
              after: workflowRecord(workflow, steps, definition),
              context: how.restoredFrom ? { restored_from: how.restoredFrom } : undefined,
            });
            return { workflow, steps };
          }),
          slugTaken(d.slug),
          "slug",
        );
      }
    },
    /**
     * Deletes the workflow as read (`w`, at `w.version`): when another request saved or deleted it
     * meanwhile, nothing is written and StaleWorkflow is thrown, so the caller reads it again
     * (a second DELETE is a 404 with one `workflow.delete` entry; If-Match is judged on what is
     * deleted).
     */
    async softDelete(w: Workflow, actor: Actor): Promise<void> {
      await hooks.beforeDelete?.();
      await db.tx(function* () {
        const changed = yield* run(
          "UPDATE workflows SET deleted_at = ? WHERE id = ? AND version = ? AND deleted_at IS NULL",
          now(),
          w.id,
          w.version,
        );
        if (changed !== 1) throw new StaleWorkflow();
        // The whole record, as a create's `after` (its definition is the last version's, whose
        // save entry carries its digest).
        const steps = (yield* stepsOf(w.id)).map(toStep);
        yield* audit(actor, {
          action: "workflow.delete",
          org_id: w.org_id,
          target_type: "workflow",
          target_id: w.id,
          target_name: w.slug,
          before: workflowRecord(w, steps, null),
        });
      });
    },
    /** The definition runs execute; shared and frozen (never mutate it). */
    async version(workflowId: number, version: number): Promise<WorkflowVersion | null> {
      const key = `${workflowId}:${version}`;
      const hit = versions.get(key);
      if (hit) return hit;
      const def = await db.exec(
        (function* () {
          const r = yield* get<{ definition: string }>(
            "SELECT definition FROM workflow_versions WHERE workflow_id = ? AND version = ?",
            workflowId,
            version,
          );
          const stored = r
            ? parseJson<Parameters<typeof resolveConfigs>[0] | null>(r.definition, null)
            : null;
          return stored ? yield* resolveConfigs(stored) : null;
        })(),
      );
      if (!def) return null;
      if (versions.size >= VERSION_CACHE_SIZE) versions.delete(versions.keys().next().value!);
      versions.set(key, deepFreeze(def));
      return def;
    },
  };
}
export type WorkflowStore = ReturnType<typeof createWorkflowStore>;
