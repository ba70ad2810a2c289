// Starting a run, in the contract's order (CONTRACT §4): the route has done 1–3 (token, org,
// workflow); here 4 rate limit … 9 commit. Nothing is stored when a request is refused.
import { createHash } from "node:crypto";
import { AppError, serviceUnavailable } from "../errors.ts";
import { readBody, readWhole } from "../http/body.ts";
import type { Principal } from "../http/auth.ts";
import { getValidator } from "../validators/registry.ts";
import type { ValidatorDef } from "../validators/types.ts";
import type { Workflow, WorkflowVersion } from "../workflows/types.ts";
import { versionNumber, versionUnavailable } from "../workflows/versions.ts";
import type { WorkflowStore } from "../workflows/store.ts";
import { now } from "../db/util.ts";
import { uuidv7 } from "../lib/uuid.ts";
import { offers } from "../http/threads/handoff.ts";
import { type DirectRun, type FinalState, queuedRun } from "./direct.ts";
import type { Executor } from "./executor.ts";
import { type IdempotencyStore, inProgress } from "./idempotency.ts";
import type { Intake } from "./intake/modes.ts";
import { isSliced } from "./content-store.ts";
import { type IntakeRunner, OFFLOAD_MIN_BYTES } from "./intake/offload.ts";
import type { NewRun, RunStore } from "./store.ts";
import { pendingSteps } from "./summary.ts";
import type { Run } from "./types.ts";

export const MAX_FILENAME_LENGTH = 255;
const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,255}$/;

export interface StartLimits {
  maxPayloadBytes: number;
  maxMetadataBytes: number;
  maxQueue: number;
  /** One org's share of the queue (config.ts queuePerOrg). */
  maxQueuePerOrg: number;
}

export interface StartOutcome {
  runId: string;
  replay: { status: number; headers: Record<string, string>; body: string } | null;
  /** A retry of a request whose run exists but was never answered: answered from that run. */
  replayRun?: string;
  idempotencyKey: string | null;
  /** The run, already final and written: it ran in the inline lane (executor.runInline). */
  run?: Run;
  /** The run as written queued (not executed from memory), before any worker took it. */
  queued?: Run;
}

/**
 * Bodies read before the route ran: an HTTP thread reads a small run request's body to decide
 * whether it serves the run itself (src/http/threads/thread-runs.ts). Within the limit by then.
 */
export const bodiesRead = new WeakMap<Request, Uint8Array>();

/**
 * A body whose length is declared and within the limit is read in one native call; the streaming
 * reader, which counts chunks against the limit, costs ~70 µs more per request (measured,
 * docs/benchmarks.md) and stays for chunked bodies and for the 413 on a declared length.
 */
async function bodyOf(request: Request, max: number): Promise<Uint8Array> {
  const read = bodiesRead.get(request);
  if (read) return read;
  const declared = request.headers.get("content-length");
  // A large body is read as a stream into one buffer of its declared size: request.bytes() of
  // four 24 MB uploads cost the HTTP thread ~15 % more CPU and longer stretches without a turn
  // (docs/benchmarks.md, measure 8b).
  if (
    declared !== null &&
    !request.headers.has("transfer-encoding") &&
    Number(declared) <= max &&
    Number(declared) < OFFLOAD_MIN_BYTES
  )
    return readWhole(request);
  return readBody(request, max);
}

/**
 * Rule 2 of the spec: the type must be allowed and every active step's validator must support it
 * — as the version that runs says (a run pinned to an older version runs its file types too).
 */
export function checkFileType(
  def: WorkflowVersion,
  fileType: Intake["fileType"],
  extra: readonly ValidatorDef[] = NO_EXTRA,
) {
  const refusal = fileTypeRefusal(def, fileType, extra);
  if (refusal !== null) throw new AppError(400, "file_type_unsupported", refusal);
}

const NO_EXTRA: readonly ValidatorDef[] = [];
/**
 * Why a version refuses a file type (null: it accepts it), per version, validator set and type.
 * Versions never change, so the loop over the steps runs once per type, not on every run; on
 * every run it also made the engine throw away and recompile its optimized code (an
 * out-of-bounds exit; docs/benchmarks.md, tenth pass).
 */
const refusals = new WeakMap<readonly ValidatorDef[], WeakMap<WorkflowVersion, Map<string, string | null>>>();
function fileTypeRefusal(
  def: WorkflowVersion,
  fileType: string,
  extra: readonly ValidatorDef[],
): string | null {
  let byDef = refusals.get(extra);
  if (!byDef) {
    byDef = new WeakMap();
    refusals.set(extra, byDef);
  }
  let byType = byDef.get(def);
  if (!byType) {
    byType = new Map();
    byDef.set(def, byType);
  }
  let r = byType.get(fileType);
  if (r === undefined) {
    r = refusalOf(def, fileType, extra);
    // Bounded: the keys are the intake's file types (a handful).
    byType.set(fileType, r);
  }
  return r;
}

function refusalOf(def: WorkflowVersion, fileType: string, extra: readonly ValidatorDef[]): string | null {
  // The first active step whose validator cannot read the type: rule 2's "blocking step".
  const step = def.steps.find(
    (s) =>
      s.is_active &&
      !getValidator(s.validator, extra)?.supportedFileTypes.includes(fileType as Intake["fileType"]),
  );
  const blocks =
    step && `Step ${step.order} "${step.name}" (${step.validator}) does not support ${fileType} submissions`;
  if (!def.allowed_file_types.includes(fileType as Intake["fileType"]))
    return `This workflow accepts ${def.allowed_file_types.join(", ")} submissions; this one is ${fileType}.${blocks ? ` ${blocks} either.` : ""}`;
  return blocks ? `${blocks}.` : null;
}

// A version's steps never change (versions are immutable and cached), so its active steps are
// listed once, not on every run.
const activeOf = new WeakMap<WorkflowVersion, WorkflowVersion["steps"]>();
function activeSteps(def: WorkflowVersion): WorkflowVersion["steps"] {
  let a = activeOf.get(def);
  if (!a) {
    a = def.steps.filter((s) => s.is_active);
    activeOf.set(def, a);
  }
  return a;
}

/**
 * What starting a run needs of the executor. An HTTP thread's own (src/http/threads/thread-runs.ts)
 * adds `commitInline`: the write of a run it checked before the route ran (handoff.ts).
 */
export type RunExecutor = Pick<
  Executor,
  "acceptsDirect" | "queueDepth" | "queuedInMemory" | "runInline" | "submitDirect" | "notify"
> & {
  commitInline?(record: DirectRun["record"], f: FinalState): ReturnType<Executor["runInline"]>;
};

export function createRunService(deps: {
  runs: RunStore;
  workflows: WorkflowStore;
  idempotency: IdempotencyStore;
  executor: RunExecutor;
  intake: IntakeRunner;
  limits: StartLimits;
  /** Validators this instance adds to the built-in ones (registry.ts, getValidator). */
  extraValidators?: readonly ValidatorDef[];
}) {
  const { runs, workflows, idempotency, executor, limits } = deps;
  /**
   * The queue's bounds, as a check to call in the same turn as the run's create (so a burst of
   * requests cannot overshoot them). The org's own share is counted only when the whole queue
   * could hold that many of its runs: that count reads the database, awaited here, before.
   */
  const admission = (orgId: number): (() => void) | Promise<() => void> => {
    const check = (ofOrg: (() => number) | null) => () => {
      // Read first, whatever is refused: the reading ends the store's tally of the org's creates
      // (runs/store.ts, queuedOfOrg); left unread by the queue's 503, it stayed for ever.
      const mine = ofOrg?.();
      if (executor.queueDepth() >= limits.maxQueue)
        throw serviceUnavailable("Too many runs are waiting; retry later.", 5);
      if (mine !== undefined && mine + executor.queuedInMemory(orgId) >= limits.maxQueuePerOrg)
        throw serviceUnavailable("Too many of this organization's runs are waiting; retry later.", 5);
    };
    // Not awaited when the count is not needed: an await of nothing still yields a turn, in which
    // other requests' runs would be queued past the share unseen.
    if (executor.queueDepth() < limits.maxQueuePerOrg) return check(null);
    return runs.queuedOfOrg(orgId).then(check);
  };

  const extra = deps.extraValidators ?? [];
  const service = { start: startRun, replayByKey };

  /**
   * The URL names the key's run's workflow: its id, its slug now, or the slug it had when the first
   * request was answered (the slug in that answer). A workflow renamed since is still the one the
   * retry's URL named; without the answer's slug its retry was a 404 while a deleted one's replayed.
   */
  function namesRunWorkflow(
    identifier: string,
    run: { workflow_id: number; workflow_slug: string },
    answer: { body: string } | null,
  ): boolean {
    if (identifier === run.workflow_slug || identifier === String(run.workflow_id)) return true;
    if (!answer) return false;
    try {
      return (JSON.parse(answer.body) as { workflow?: { slug?: unknown } }).workflow?.slug === identifier;
    } catch {
      return false;
    }
  }

  /**
   * The retry of an answered request that is refused now (its workflow deleted, or its slug taken
   * by a new one; the caller now a Viewer): the first answer, as long as the key is kept, if the
   * key's run is in this org, of the workflow the URL names (its slug or id as they are) and the
   * request is the same (the hash with the run's workflow). Its first request still in flight:
   * 409, as begin gives. Else null: the refusal stands. Only
   * after a refusal: no cost on a start.
   */
  async function replayByKey(
    p: Principal,
    orgId: number,
    identifier: string,
    request: Request,
    pinned: string | null,
  ): Promise<StartOutcome | null> {
    const key = request.headers.get("idempotency-key");
    if (key === null || !IDEMPOTENCY_KEY_RE.test(key)) return null;
    const kept = await idempotency.answered(p.user.id, key);
    if (kept === "in_progress") throw inProgress();
    if (!kept) return null;
    const run = await runs.get(orgId, kept.runId);
    if (!run || !namesRunWorkflow(identifier, run, kept.answer)) return null;
    const version = pinned === null ? run.workflow_version : versionNumber(pinned);
    if (version === null) return null;
    const body = await bodyOf(request, limits.maxPayloadBytes).catch(() => null);
    if (!body) return null;
    const [hash, legacy] = requestHash(request, orgId, run.workflow_id, pinned, version, body);
    if (kept.hash !== hash && kept.hash !== legacy) return null;
    if (kept.answer) return { runId: "", replay: kept.answer, idempotencyKey: key };
    return { runId: run.id, replay: null, replayRun: run.id, idempotencyKey: key };
  }

  /**
   * A refusal a change to the workflow after a first answer can cause (deactivated, its steps
   * turned off): a retry of that request (the same Idempotency-Key and request) replays the answer,
   * since the run it started exists. Looked up only on such a refusal, read only.
   */
  async function refuseUnlessAnswered(
    refusal: AppError,
    p: Principal,
    orgId: number,
    wf: Workflow,
    request: Request,
    pinned: string | null,
    precondition: AppError | null,
  ): Promise<StartOutcome> {
    const replay = await replayOf(p, orgId, wf, request, pinned);
    // The first answer is a 2xx: this request's false If-Match / If-None-Match is judged on it.
    if (precondition && (replay?.state === "replay" || replay?.state === "run")) throw precondition;
    const key = request.headers.get("idempotency-key");
    if (replay?.state === "replay") return { runId: "", replay: replay.answer, idempotencyKey: key };
    if (replay?.state === "run")
      return { runId: replay.runId, replay: null, replayRun: replay.runId, idempotencyKey: key };
    // Its first request still in flight: 409 idempotency_key_in_progress, as before the change.
    if (
      key !== null &&
      IDEMPOTENCY_KEY_RE.test(key) &&
      (await idempotency.answered(p.user.id, key)) === "in_progress"
    )
      throw inProgress();
    throw refusal;
  }

  /** The stored answer of this very request, if it was answered; else null. */
  async function replayOf(
    p: Principal,
    orgId: number,
    wf: Workflow,
    request: Request,
    pinned: string | null,
  ): Promise<Awaited<ReturnType<IdempotencyStore["peek"]>>> {
    const key = request.headers.get("idempotency-key");
    if (key === null || !IDEMPOTENCY_KEY_RE.test(key)) return null;
    const version = pinned === null ? wf.version : versionNumber(pinned);
    if (version === null) return null;
    const body = await bodyOf(request, limits.maxPayloadBytes).catch(() => null);
    if (!body) return null;
    // Kept for replayByKey: the URL's slug may name the key's run's workflow though not this one.
    bodiesRead.set(request, body);
    const [hash, legacy] = requestHash(request, orgId, wf.id, pinned, version, body);
    return idempotency.peek(p.user.id, key, hash, legacy);
  }

  /**
   * `wait`: the client waits for the answer, so the run may execute from memory. `pinned`: the
   * `?version=n` of the request (null: the current version).
   */
  async function startRun(
    p: Principal,
    orgId: number,
    wf: Workflow,
    request: Request,
    wait = false,
    pinned: string | null = null,
    /** Throws (401) if the caller's token or session no longer holds: after a slow body read. */
    recheck?: () => Promise<void>,
    /**
     * The refusal the request's If-Match / If-None-Match call for (src/http/preconditions.ts):
     * thrown after the refusals the workflow's state gives (inactive, no such version, no active
     * step), which come first (RFC 9110 §13.2.1), and before anything is read or written.
     */
    precondition: AppError | null = null,
  ): Promise<StartOutcome> {
    // 5. workflow state (the workflow's status now, whichever version runs), then the version
    if (wf.status !== "active")
      return refuseUnlessAnswered(
        new AppError(409, "workflow_inactive", "The workflow is inactive; re-enable it to accept runs."),
        p,
        orgId,
        wf,
        request,
        pinned,
        precondition,
      );
    let version = wf.version;
    if (pinned !== null) {
      const n = versionNumber(pinned);
      if (n === null)
        throw new AppError(400, "invalid_request", "Invalid version.", [
          {
            field: "version",
            code: "invalid",
            message: "version is a version number (a positive integer).",
          },
        ]);
      version = n;
    }
    const def = version > wf.version ? null : await workflows.version(wf.id, version);
    if (!def && pinned !== null) throw versionUnavailable(wf, version);
    const active = def ? activeSteps(def) : [];
    if (!def || !active.length)
      return refuseUnlessAnswered(
        new AppError(400, "no_workflow_steps", "The workflow has no active steps."),
        p,
        orgId,
        wf,
        request,
        pinned,
        precondition,
      );
    if (precondition) throw precondition;
    const key = request.headers.get("idempotency-key");
    // Another HTTP thread accepted the request and may read and check it itself (src/http/threads/).
    const offer = wait && key === null ? offers.get(request) : undefined;
    const handed = offer ? await offer.admit(def, version) : null;
    // 6. size
    const readFrom = performance.now();
    const body = handed ? handed.sub.bytes : await bodyOf(request, limits.maxPayloadBytes);
    // A token revoked (or a user deleted, a session ended) while a slow upload was arriving must
    // not start a run: the spec's "in-flight requests fail with 401" (a deleted user's run was a
    // 500 at commit, a revoked token's async run was committed). Checked again only when the read
    // took a while: a body already here left no time for anything to change.
    if (recheck && performance.now() - readFrom > RECHECK_AFTER_MS) await recheck();
    // Idempotency: decided once the body is known; a replay answers before the other checks.
    if (key !== null) {
      if (!IDEMPOTENCY_KEY_RE.test(key))
        throw new AppError(400, "invalid_request", "Invalid Idempotency-Key.", [
          { field: "Idempotency-Key", code: "invalid", message: "1 to 255 visible ASCII characters." },
        ]);
      const [hash, legacy] = requestHash(request, orgId, wf.id, pinned, version, body);
      const begun = await idempotency.begin(p.user.id, key, hash, legacy).catch((e) => {
        // Read again by replayByKey (422: the key's workflow may be gone, its slug reused).
        bodiesRead.set(request, body);
        throw e;
      });
      if (begun.state === "replay") return { runId: "", replay: begun.answer, idempotencyKey: key };
      if (begun.state === "run")
        return { runId: begun.runId, replay: null, replayRun: begun.runId, idempotencyKey: key };
    }
    try {
      // 7. mode and fields; 8. file type
      const sub =
        handed?.sub ??
        (await deps.intake.read(request.headers, body, {
          maxMetadataBytes: limits.maxMetadataBytes,
          maxFilenameLength: MAX_FILENAME_LENGTH,
        }));
      if (!handed) checkFileType(def, sub.fileType, extra);
      // Backpressure: a bounded queue instead of unbounded memory and latency.
      const admit = admission(orgId);
      (typeof admit === "function" ? admit : await admit)();
      // 9. commit, then execute
      const id = handed?.id ?? uuidv7();
      const steps = pendingSteps(active);
      const record: NewRun = {
        id,
        orgId,
        workflowId: wf.id,
        workflowVersion: version,
        steps,
        user: { id: p.user.id, username: p.user.username },
        idempotencyKey: key,
        // Bun's hasher: node:crypto's Hash is a stream Transform, built per call (~2 % of a sync run).
        // A large body was hashed on the intake thread.
        submission: {
          ...sub,
          sha256: sub.sha256 ?? new Bun.CryptoHasher("sha256").update(sub.bytes).digest("hex"),
        },
      };
      // Content over a slice is written a slice at a time first (src/runs/content-store.ts); such a
      // run is never executed from memory (acceptsDirect takes at most DIRECT_MAX_BYTES).
      const sliced = isSliced(sub.bytes.byteLength);
      if (wait && !sliced && executor.acceptsDirect(sub.bytes.byteLength)) {
        // Nobody knows this run yet: it is written when it ends or when the wait runs out.
        const direct = { ...record, createdAt: handed?.createdAt ?? now(), workflowSlug: wf.slug };
        const inline =
          handed && executor.commitInline
            ? await executor.commitInline(direct, handed.final)
            : await executor.runInline(direct, def);
        if (inline.run) return { runId: id, replay: null, idempotencyKey: key, run: inline.run };
        // It waits for a worker after all, and the inline attempt took turns: admitted again,
        // in the turn that puts it in the memory queue.
        const queued = admission(orgId);
        (typeof queued === "function" ? queued : await queued)();
        executor.submitDirect(direct, inline.checked);
        return { runId: id, replay: null, idempotencyKey: key };
      }
      if (sliced) {
        record.submission.slices = await runs.writeContent(id, sub.bytes);
        // Writing the content took turns of the event loop, in which other runs were queued:
        // admitted again, in the same turn as the create (nothing is awaited in between).
        const again = admission(orgId);
        try {
          (typeof again === "function" ? again : await again)();
        } catch (e) {
          // Its slices are orphans otherwise; the next start removes those (removeOrphans).
          await runs.removeContent(id).catch(() => {});
          throw e;
        }
      }
      const queued = { ...record, createdAt: handed?.createdAt ?? now(), workflowSlug: wf.slug };
      const sid = await runs.create(queued);
      executor.notify({
        id,
        org_id: orgId,
        workflow_id: wf.id,
        workflow_version: version,
        file_type: sub.fileType,
        charset: sub.charset,
        filename: sub.filename,
        content: sub.bytes,
        steps,
      });
      return { runId: id, replay: null, idempotencyKey: key, queued: queuedRun(queued, sid) };
    } catch (e) {
      if (key !== null) await idempotency.release(p.user.id, key);
      throw e;
    }
  }
  return service;
}

/** A body read longer than this (ms) is followed by a re-check of the caller's credentials. */
export const RECHECK_AFTER_MS = 20;

/**
 * What makes two requests "the same request" for an Idempotency-Key (CONTRACT §4): the hash to
 * record, and for a multipart request also the hash builds before 2026-11-28 recorded
 * for it (boundary included), which still counts as the same request: a key recorded by an older
 * node, in a rolling upgrade or just before one, is replayed, not refused as reused.
 */
function requestHash(
  request: Request,
  orgId: number,
  workflowId: number,
  pinned: string | null,
  version: number,
  body: Uint8Array,
): [hash: string, legacy: string | null] {
  const boundary = multipartBoundary(request.headers.get("content-type"));
  const headersAndTarget = (withoutBoundary: boolean) => {
    const h = createHash("sha256");
    for (const name of ["content-type", "content-encoding", "x-filename", "x-submission-mode"]) {
      const value = request.headers.get(name) ?? "";
      h.update(
        `${name}:${boundary && withoutBoundary && name === "content-type" ? value.replace(boundary.param, "") : value}\n`,
      );
    }
    return h.update(`${orgId}:${workflowId}${pinned === null ? "" : `@${version}`}\n`);
  };
  const h = headersAndTarget(true);
  if (!boundary) return [h.update(body).digest("hex"), null];
  // A multipart client picks a new random boundary for every send, its retry too: the body is
  // hashed with each delimiter as one fixed mark, so a retry of the same form is the same request
  // (RFC 2046 §5.1.1: the boundary never occurs inside a part).
  const delimiter = Buffer.from(`--${boundary.value}`);
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  let from = 0;
  for (let at = bytes.indexOf(delimiter); at >= 0; at = bytes.indexOf(delimiter, from)) {
    h.update(bytes.subarray(from, at)).update("\u0000--boundary\u0000");
    from = at + delimiter.length;
  }
  const legacy = headersAndTarget(false).update(body).digest("hex");
  return [h.update(bytes.subarray(from)).digest("hex"), legacy];
}

/** A multipart Content-Type's boundary: the parameter as written, and its value. */
function multipartBoundary(contentType: string | null): { param: string; value: string } | null {
  if (!contentType || !/^\s*multipart\//i.test(contentType)) return null;
  const m = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const value = m?.[1] ?? m?.[2];
  return m && value ? { param: m[0], value } : null;
}
export type RunService = ReturnType<typeof createRunService>;
