// Workflows as authors change them: create, update, steps; each change checked (check.ts) and
// saved as a new version.
import type { Actor } from "../audit/types.ts";
import { conflict, notFound } from "../errors.ts";
import type { SchemaStore } from "../schemas/store.ts";
import { storedClosure, storedXsdSet } from "../schemas/service.ts";
import { type StepConfigContext, externalRefsOf, xsdRootOfStep } from "../validators/registry.ts";
import type { FileType, ValidatorDef } from "../validators/types.ts";
import { savedConfigsOf } from "./check.ts";
import { createDraftChecker, type DraftChecker, type XsdSetWalk } from "./check-thread.ts";
import { type Preconditions, checkPreconditions } from "./etag.ts";
import { fresh } from "./fresh.ts";
import { type SaveHow, WorkflowLimit, type WorkflowStore } from "./store.ts";
import { EMPTY_DRAFT, type StepDef, type Workflow, type WorkflowDraft } from "./types.ts";

type Loaded = { workflow: Workflow; steps: StepDef[] };

/**
 * Live (not deleted) workflows an organization may have by default (2026-11-29; was unbounded:
 * one author could create workflows, each up to 64 MiB of snapshots, until the disk was full).
 * Generous for real use; an operator sets `max_workflows_per_org` (docs/limits.md).
 */
export const MAX_WORKFLOWS_PER_ORG = 1000;
const tooManyWorkflows = (max: number) =>
  conflict(
    `An organization can have at most ${max} ${max === 1 ? "workflow" : "workflows"}; delete unused ones first.`,
  );

export interface StepInput {
  name?: string;
  validator?: string;
  config?: Record<string, unknown>;
  is_active?: boolean;
}
export interface WorkflowInput {
  slug?: string;
  name?: string;
  description?: string;
  allowed_file_types?: string[];
  fail_fast?: boolean;
  status?: "active" | "inactive";
  retention_days?: number | null;
  steps?: StepInput[];
}

/** A draft's content, for "did anything change": step ids and key order do not count. */
function contentOf(d: WorkflowDraft): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  // The file types are a set: the same ones in another order are no change (the web editor
  // sends them in its own order).
  return JSON.stringify(
    sorted({
      ...d,
      allowed_file_types: [...d.allowed_file_types].sort(),
      steps: d.steps.map(({ id: _, ...s }) => s),
    }),
  );
}

export const draftOf = (w: Workflow, steps: StepDef[]): WorkflowDraft => ({
  slug: w.slug,
  name: w.name,
  description: w.description,
  status: w.status,
  allowed_file_types: w.allowed_file_types,
  fail_fast: w.fail_fast,
  retention_days: w.retention_days,
  steps: steps.map((s) => ({
    id: s.id,
    name: s.name,
    validator: s.validator,
    config: s.config,
    is_active: s.is_active,
  })),
});

const newStep = (s: StepInput) => ({
  id: null,
  name: s.name ?? "",
  validator: s.validator ?? "",
  config: s.config ?? {},
  is_active: s.is_active ?? true,
});

/**
 * Steps sent again keep their ids: each new step takes the id of the first current step not yet
 * taken with the same name and validator. A PUT (the web editor saves with one) or a PATCH of
 * `steps` sends steps without ids; without this every save deleted and re-created every step, so
 * the version history showed each as removed and added, hiding the one field that changed.
 */
function keepStepIds(steps: WorkflowDraft["steps"], current: WorkflowDraft["steps"]): WorkflowDraft["steps"] {
  const free = [...current];
  return steps.map((s) => {
    if (s.id != null) return s;
    const i = free.findIndex((c) => c.name === s.name && c.validator === s.validator);
    if (i < 0) return s;
    const [match] = free.splice(i, 1);
    return { ...s, id: match!.id };
  });
}

/** The fields the input names, over `base`; steps given are new steps replacing the list. */
export function applyInput(base: WorkflowDraft, b: WorkflowInput): WorkflowDraft {
  return {
    slug: b.slug ?? base.slug,
    name: b.name ?? base.name,
    description: b.description ?? base.description,
    status: b.status ?? base.status,
    allowed_file_types: (b.allowed_file_types ?? base.allowed_file_types) as FileType[],
    fail_fast: b.fail_fast ?? base.fail_fast,
    retention_days: b.retention_days === undefined ? base.retention_days : b.retention_days,
    steps: b.steps ? b.steps.map(newStep) : base.steps,
  };
}

export function createWorkflowService(
  store: WorkflowStore,
  schemas?: SchemaStore,
  /** Validators this instance adds to the built-in ones (registry.ts, getValidator). */
  extra: readonly ValidatorDef[] = [],
  /** Where drafts are checked (check-thread.ts); without one, always here. */
  checker: DraftChecker = createDraftChecker(),
  /** Live workflows an org may have (config `max_workflows_per_org`). */
  maxLive = MAX_WORKFLOWS_PER_ORG,
) {
  /**
   * Checks the draft (throws its 400), with the org's stored schemas its steps reference
   * (transitively); `only` names the step a step route changes (its problems have no prefix).
   * `saved`: the workflow's steps as saved; a step the draft leaves as it was saved is not
   * compiled again (check.ts, SavedConfigs).
   */
  async function check(
    orgId: number,
    d: WorkflowDraft,
    only: number | null = null,
    saved: StepDef[] = [],
  ): Promise<void> {
    const roots = schemas
      ? d.steps.flatMap((s, step) => {
          const root = xsdRootOfStep(s.validator, s.config);
          return root ? [{ ...root, step }] : [];
        })
      : [];
    // The stored XSDs they reach are walked in the draft's turn on the check thread (it parses them).
    const xsdSet: XsdSetWalk | undefined =
      schemas && roots.length > 0 ? (round) => storedXsdSet(schemas, orgId, roots, round) : undefined;
    await checker.check(d, await checkContext(orgId, d), only, orgId, xsdSet, savedConfigsOf(d.steps, saved));
  }
  async function checkContext(orgId: number, d: WorkflowDraft): Promise<StepConfigContext> {
    if (!schemas) return { extra };
    const ctx: StepConfigContext = { extra };
    const uris = d.steps.flatMap((s) => externalRefsOf(s.validator, s.config));
    if (uris.length > 0) ctx.resources = await storedClosure(schemas, orgId, uris);
    return ctx;
  }
  async function load(orgId: number, identifier: string): Promise<Loaded> {
    const w = await store.find(orgId, identifier);
    if (!w) throw notFound("Workflow");
    return { workflow: w, steps: await store.steps(w.id) };
  }
  /** Saves `d`, made from `cur`, unless another save came first (StaleWorkflow: fresh() again). */
  const save = (orgId: number, cur: Loaded, d: WorkflowDraft, how: SaveHow) =>
    store.save(orgId, cur.workflow.id, d, how, cur.workflow.version);
  return {
    load,
    check,
    list: store.list,
    /**
     * 409 once the org has its most workflows: the answer a new workflow's request gets whatever
     * its content, so also before a false If-None-Match (RFC 9110 §13.2.1), as a webhook's.
     */
    async roomFor(orgId: number): Promise<void> {
      if ((await store.countLive(orgId)) >= maxLive) throw tooManyWorkflows(maxLive);
    },
    async create(orgId: number, b: WorkflowInput, actor: Actor) {
      // Before the draft's check, which may compile schemas for seconds. Counted again in the
      // save's transaction: two requests racing for the last place.
      if ((await store.countLive(orgId)) >= maxLive) throw tooManyWorkflows(maxLive);
      const d = applyInput(EMPTY_DRAFT, b);
      await check(orgId, d);
      return store.save(orgId, null, d, { actor, action: "workflow.create", maxLive }).catch((e) => {
        throw e instanceof WorkflowLimit ? tooManyWorkflows(maxLive) : e;
      });
    },
    /**
     * PUT replaces the whole definition; PATCH changes the named fields (steps too, if given).
     * A request that changes nothing (PATCH {}, the same values) saves nothing: the version
     * counts changes (CONTRACT §2), and the audit log records none. Each edit is applied to
     * the workflow as it is when saved (fresh.ts): concurrent edits all take effect.
     */
    async update(
      orgId: number,
      identifier: string,
      b: WorkflowInput,
      replace: boolean,
      actor: Actor,
      /** The request's If-Match and If-None-Match (etag.ts): checked against each read, a retry's included. */
      cond?: Preconditions,
    ) {
      return fresh(async () => {
        const cur = await load(orgId, identifier);
        checkPreconditions(cond, cur.workflow.version);
        const now = draftOf(cur.workflow, cur.steps);
        const given = applyInput(replace ? EMPTY_DRAFT : now, b);
        const d = b.steps ? { ...given, steps: keepStepIds(given.steps, now.steps) } : given;
        if (contentOf(d) === contentOf(now)) return cur;
        await check(orgId, d, null, cur.steps);
        // Compared again with the snapshots pinned: the request carries none, the stored steps
        // do. A stored schema changed since the last save makes a difference (decisions.md).
        if (contentOf(d) === contentOf(now)) return cur;
        return save(orgId, cur, d, { actor, action: "workflow.update" });
      });
    },
    /** If-Match (etag.ts) makes the deletion conditional on the version, as for PUT and PATCH. */
    async remove(orgId: number, identifier: string, actor: Actor, cond?: Preconditions) {
      return fresh(async () => {
        const { workflow } = await load(orgId, identifier);
        checkPreconditions(cond, workflow.version);
        await store.softDelete(workflow, actor);
      });
    },
    async getStep(orgId: number, identifier: string, stepId: string): Promise<StepDef> {
      const { steps } = await load(orgId, identifier);
      const step = steps.find((x) => String(x.id) === stepId);
      if (!step) throw notFound("Step");
      return step;
    },
    async addStep(orgId: number, identifier: string, s: StepInput & { order?: number }, actor: Actor) {
      return fresh(async () => {
        const cur = await load(orgId, identifier);
        const d = draftOf(cur.workflow, cur.steps);
        const at = Math.min(Math.max((s.order ?? d.steps.length + 1) - 1, 0), d.steps.length);
        d.steps.splice(at, 0, newStep(s));
        await check(orgId, d, at, cur.steps);
        const saved = await save(orgId, cur, d, { actor, action: "step.create" });
        return { ...saved, step: saved.steps[at]! };
      });
    },
    async updateStep(
      orgId: number,
      identifier: string,
      stepId: string,
      s: StepInput & { order?: number },
      actor: Actor,
    ) {
      return fresh(async () => {
        const cur = await load(orgId, identifier);
        const d = draftOf(cur.workflow, cur.steps);
        const from = d.steps.findIndex((x) => String(x.id) === stepId);
        if (from < 0) throw notFound("Step");
        const old = d.steps[from]!;
        const changed = {
          ...old,
          name: s.name ?? old.name,
          validator: s.validator ?? old.validator,
          config: s.config ?? (s.validator && s.validator !== old.validator ? {} : old.config),
          is_active: s.is_active ?? old.is_active,
        };
        d.steps.splice(from, 1);
        const to = s.order === undefined ? from : Math.min(s.order - 1, d.steps.length);
        d.steps.splice(to, 0, changed);
        // The same contents in the same places: a step moved past a twin (same name, validator and
        // config) reads the same by content but is a change (a step keeps its id through moves).
        const unchanged = () =>
          contentOf(d) === contentOf(draftOf(cur.workflow, cur.steps)) &&
          d.steps.every((x, i) => x.id === cur.steps[i]!.id);
        if (unchanged()) return { ...cur, step: cur.steps[from]! };
        await check(orgId, d, to, cur.steps);
        if (unchanged()) return { ...cur, step: cur.steps[from]! }; // with snapshots, as update()
        const saved = await save(orgId, cur, d, { actor, action: "step.update" });
        return { ...saved, step: saved.steps[to]! };
      });
    },
    async deleteStep(orgId: number, identifier: string, stepId: string, actor: Actor) {
      return fresh(async () => {
        const cur = await load(orgId, identifier);
        const d = draftOf(cur.workflow, cur.steps);
        const at = d.steps.findIndex((x) => String(x.id) === stepId);
        if (at < 0) throw notFound("Step");
        d.steps.splice(at, 1);
        // Checked like every save: it refreshes the other steps' stored-schema snapshots.
        await check(orgId, d, null, cur.steps);
        return save(orgId, cur, d, { actor, action: "step.delete" });
      });
    },
  };
}
export type WorkflowService = ReturnType<typeof createWorkflowService>;
