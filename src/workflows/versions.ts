// Workflow versions: every save makes one (CONTRACT §2: `version` +1 on every change), and each
// keeps the whole definition as saved. Here they are listed, read, compared and restored; runs
// can be started against one (src/runs/service.ts).
import { canonicalJson } from "../audit/chain.ts";
import type { Actor } from "../audit/types.ts";
import { AppError, invalidField, notFound } from "../errors.ts";
import { diffVersions } from "./diff.ts";
import type { ValidatorDef } from "../validators/types.ts";
import { savedConfigsOf } from "./check.ts";
import { createDraftChecker, type DraftChecker } from "./check-thread.ts";
import { type Preconditions, checkPreconditions } from "./etag.ts";
import { fresh } from "./fresh.ts";
import { draftOf } from "./service.ts";
import type { WorkflowStore } from "./store.ts";
import type { StepDef, Workflow, WorkflowDraft, WorkflowVersion } from "./types.ts";
import type { VersionMeta, VersionStore } from "./version-store.ts";

/** `n` from a path or query: a positive integer, else null. */
export const versionNumber = (s: string | null | undefined): number | null =>
  s != null && /^[1-9]\d{0,8}$/.test(s) ? Number(s) : null;

/** 409 for a run against a version the workflow does not have (docs/audit.md). */
export const versionUnavailable = (w: Workflow, n: number) =>
  new AppError(
    409,
    "workflow_version_unavailable",
    `Workflow "${w.slug}" has no version ${n}: its versions are 1 to ${w.version}.`,
    [{ field: "version", code: "unavailable", message: `No version ${n}.` }],
  );

/** The draft that restores `def` over the workflow as it is now: slug and status stay. */
export function restoreDraft(cur: Workflow, curSteps: StepDef[], def: WorkflowVersion): WorkflowDraft {
  const live = new Set(curSteps.map((s) => s.id));
  return {
    slug: cur.slug,
    status: cur.status,
    // A version saved before settings were recorded (migration 0016) keeps today's.
    name: def.name ?? cur.name,
    description: def.description ?? cur.description,
    retention_days: "retention_days" in def ? (def.retention_days ?? null) : cur.retention_days,
    allowed_file_types: [...def.allowed_file_types],
    fail_fast: def.fail_fast,
    steps: def.steps.map((s) => ({
      id: live.has(s.id) ? s.id : null,
      revive: live.has(s.id) ? undefined : s.id,
      name: s.name,
      validator: s.validator,
      config: structuredClone(s.config),
      is_active: s.is_active,
    })),
  };
}

/** Whether saving `d` would change nothing (restoring the version the workflow already equals). */
function unchanged(d: WorkflowDraft, cur: Workflow, curSteps: StepDef[]): boolean {
  const now = draftOf(cur, curSteps);
  const shape = (x: WorkflowDraft) =>
    canonicalJson({
      ...x,
      steps: x.steps.map((s) => [s.id ?? s.revive, s.name, s.validator, s.is_active, s.config]),
    });
  return shape(d) === shape(now);
}

export function createVersionService(
  store: WorkflowStore,
  versions: VersionStore,
  /** Where drafts are checked (check-thread.ts); without one, always here. */
  checker: DraftChecker = createDraftChecker(),
  /** Validators this instance adds (a test server's test_hold), known to restores as to saves. */
  extra: readonly ValidatorDef[] = [],
) {
  async function load(orgId: number, identifier: string) {
    const w = await store.find(orgId, identifier);
    if (!w) throw notFound("Workflow");
    return w;
  }
  async function one(w: Workflow, raw: string): Promise<{ def: WorkflowVersion; meta: VersionMeta }> {
    const n = versionNumber(raw);
    const [def, meta] =
      n === null ? [null, null] : await Promise.all([store.version(w.id, n), versions.meta(w.id, n)]);
    if (!def || !meta) throw notFound("Workflow version");
    return { def, meta };
  }
  return {
    async list(orgId: number, identifier: string, limit: number, offset: number) {
      const w = await load(orgId, identifier);
      return { workflow: w, ...(await versions.list(w.id, limit, offset)) };
    },
    async detail(orgId: number, identifier: string, n: string) {
      const w = await load(orgId, identifier);
      return { workflow: w, ...(await one(w, n)) };
    },
    /** `against` defaults to the version before n. */
    async diff(orgId: number, identifier: string, n: string, against: string | undefined) {
      const w = await load(orgId, identifier);
      const to = await one(w, n);
      let base = against;
      if (base === undefined) {
        if (to.meta.version === 1)
          throw invalidField(
            "against",
            "Version 1 has no version before it: name one with ?against=m.",
            "required",
          );
        base = String(to.meta.version - 1);
      } else if (versionNumber(base) === null)
        throw invalidField("against", "against is a version number (a positive integer).");
      const from = await one(w, base);
      return { workflow: w, from, to, diff: diffVersions(from.def, to.def) };
    },
    /**
     * A new version equal to n: its settings (slug and status stay as they are) and its steps
     * with their configs as saved (stored schemas as they were then, not re-read). `created` is
     * false when the workflow already equals n: nothing is saved.
     */
    /** `cond`: the request's If-Match and If-None-Match (etag.ts), as for PUT and PATCH. */
    async restore(orgId: number, identifier: string, n: string, actor: Actor, cond?: Preconditions) {
      // Applied to the workflow as it is when saved, like every edit (fresh.ts).
      return fresh(async () => {
        const w = await load(orgId, identifier);
        checkPreconditions(cond, w.version);
        const { def } = await one(w, n);
        const curSteps = await store.steps(w.id);
        const d = restoreDraft(w, curSteps, def);
        if (unchanged(d, w, curSteps)) return { created: false, workflow: w };
        // Checked like any save (a validator may have gone since), with no stored schemas
        // supplied: the snapshot carried in each config is what is restored. A step restored as
        // it is saved now is not compiled again (check.ts, SavedConfigs).
        await checker.check(d, { extra }, null, orgId, undefined, savedConfigsOf(d.steps, curSteps));
        const saved = await store.save(
          orgId,
          w.id,
          d,
          { actor, action: "workflow.restore", restoredFrom: def.version },
          w.version,
        );
        return { created: true, workflow: saved.workflow };
      });
    },
  };
}
export type VersionService = ReturnType<typeof createVersionService>;
