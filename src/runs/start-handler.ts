// Starting a run, the route's handler (POST …/workflows/:workflow/runs/): steps 1–3 of the
// contract here (org, role, workflow), then runService.start, the wait, and the answer. The app's
// route runs it (routes.ts), and so does the sync-run lane of the HTTP threads
// (src/http/threads/lane.ts), which reaches it without the framework: one implementation.
import type { Deps } from "../deps.ts";
import { ReferenceGone } from "../db/program.ts";
import { AppError, notFound, unauthenticated } from "../errors.ts";
import type { Principal } from "../http/auth.ts";
import { untaggedRefusal } from "../http/preconditions.ts";
import { DEFAULT_HEADERS } from "../http/security.ts";
import { publicOrigin } from "../http/url.ts";
import { type OrgContext, requireOrgRole } from "../orgs/access.ts";
import { parsePrefer } from "./prefer.ts";
import { presentRun } from "./present.ts";
import { isFinal } from "./types.ts";

const MAX_WAIT_S = 60;
const RETRY_AFTER_S = "1";

export interface StartRunContext {
  params: { org_slug: string; workflow: string };
  query: { version?: string };
  request: Request;
  principal: Principal;
  /** The answer's headers so far (security, rate limits, Warning): they go into the Response, and `set` is left empty. */
  set: { headers: Record<string, unknown> };
}

/** What the route needs of the instance (an HTTP thread builds its own, thread-runs.ts). */
export type StartDeps = Pick<
  Deps,
  "orgs" | "config" | "runs" | "runService" | "tokens" | "workflowStore" | "idempotency"
> & { executor: Pick<Deps["executor"], "waitFinal" | "settle" | "live"> };

export function startRunHandler(
  deps: StartDeps,
  hooks: {
    beforeRun?: (p: Principal) => void | Promise<void>;
    /** The web session's principal again (null: signed out, expired, user gone): src/web/sessions.ts. */
    session?: (request: Request) => Promise<Principal | null>;
  } = {},
) {
  const { orgs, config, runs, runService, executor, tokens, workflowStore } = deps;
  const origin = (r: Request) => publicOrigin(config.base_url, r);
  return async (ctx: StartRunContext): Promise<Response> => {
    const { params, query, request, principal, set } = ctx;
    let org: OrgContext["org"];
    try {
      ({ org } = await requireOrgRole(orgs, principal, params.org_slug, "executor"));
    } catch (e) {
      // The role lowered to Viewer since: a retry with the key gets the first answer, as a GET of
      // the run would; removed from the org, or the org suspended, the 403 a GET would get.
      if (!(e instanceof AppError) || e.status !== 403 || !request.headers.has("idempotency-key")) throw e;
      const { org: readable } = await requireOrgRole(orgs, principal, params.org_slug, "viewer");
      return replayAfter(e, readable, ctx);
    }
    const wf = await workflowStore.find(org.id, params.workflow, principal.generation);
    if (!wf) return replayAfter(notFound("Workflow"), org, ctx);
    const limited = hooks.beforeRun?.(principal);
    if (limited) await limited;
    // If-Match / If-None-Match: the runs of a workflow have no entity tag (src/http/preconditions.ts).
    // Judged by the start after the workflow's own refusals (inactive …: RFC 9110 §13.2.1).
    const precondition = untaggedRefusal(request.headers);
    const prefer = parsePrefer(request.headers.get("prefer"));
    const waitMs = prefer.respondAsync
      ? 0
      : prefer.waitSeconds !== null
        ? Math.min(prefer.waitSeconds, MAX_WAIT_S) * 1000
        : config.sync_wait_ms;
    const applied = prefer.respondAsync
      ? "respond-async"
      : prefer.waitSeconds !== null
        ? `wait=${waitMs / 1000}`
        : null;
    /** `min`: executor before the run is committed (a slow upload), viewer for its results. */
    const recheck = async (min: "executor" | "viewer") => {
      if (principal.token) await tokens.recheck(principal.token.id);
      // A session ended meanwhile (sign-out, password change, user deleted) likewise: CONTRACT §4.
      else if (principal.session && hooks.session && !(await hooks.session(request)))
        throw unauthenticated("The session has ended.");
      // Removed from the org, the org suspended or deleted, or the role lowered meanwhile: 403, as
      // the request would now get (CONTRACT §6); after the run, as a GET of it would (a Viewer
      // still reads it). Read at the current generation, not the one authentication saw.
      await requireOrgRole(orgs, { ...principal, generation: undefined }, params.org_slug, min);
    };
    let started: Awaited<ReturnType<typeof runService.start>>;
    try {
      started = await runService.start(
        principal,
        org.id,
        wf,
        request,
        waitMs > 0,
        query.version ?? null,
        () => recheck("executor"),
        precondition,
      );
    } catch (e) {
      // A row the run refers to deleted since authentication (its user, with the token): the 401
      // or 403 the request now gets, not the catch-all 409 (src/http/errors.ts). Nothing stored.
      if (e instanceof ReferenceGone) await recheck("executor");
      // The key's workflow deleted (or renamed) and its slug taken by a new one: the same request
      // still, also when the new one refuses runs (inactive, no active step), which is found
      // before the key is read.
      if (
        e instanceof AppError &&
        REPLAYABLE_REFUSALS.has(e.errorCode) &&
        request.headers.has("idempotency-key")
      )
        return replayAfter(e, org, ctx);
      throw e;
    }
    if (started.replay) {
      const r = started.replay;
      return answer(r.status, r.body, { ...r.headers, "idempotent-replayed": "true" }, set);
    }
    if (started.replayRun) return replayRun(started.replayRun, org, request, principal.user.id, set);
    let done = started.run ?? null;
    // Asked for at once (respond-async, wait=0): 202 with the run as committed, whatever a worker
    // did with it since (reading it back raced the worker: a tiny run could be final, a 201).
    if (waitMs <= 0 && started.queued) done = started.queued;
    else if (!done) {
      await executor.waitFinal(started.runId, waitMs, request.signal);
      // A run executed from memory is handed over, or written now if it is not over.
      done = await executor.settle(started.runId);
    }
    const run = done ?? (await runs.get(org.id, started.runId))!;
    const final = isFinal(run.status);
    const live = final || run === started.queued ? null : executor.live(run.id);
    const body = presentRun(origin(request), org.slug, run, live);
    // Location on 201 too: the run is a resource created by this request (RFC 9110 §15.3.2).
    const headers: Record<string, string> = { location: body.url };
    if (applied) headers["preference-applied"] = applied;
    let status = 201;
    if (!final) {
      status = 202;
      headers["retry-after"] = RETRY_AFTER_S;
    }
    const text = JSON.stringify(body);
    // Recorded before the token's re-check: the run exists whatever this request is told, and a
    // retry with the key (by the same user, with a valid token) gets this answer, not a 409 for
    // 24 h.
    if (started.idempotencyKey)
      await deps.idempotency.complete(principal.user.id, started.idempotencyKey, {
        status,
        headers,
        body: text,
      });
    // The wait can be long: a token revoked meanwhile gets 401, a caller removed from the org 403,
    // not the results. An inline run (started.run) waited for nothing but its own commit, a
    // millisecond or two: no recheck.
    if (waitMs > 0 && !started.run) await recheck("viewer");
    return answer(status, text, headers, set);
  };

  /**
   * A refusal, unless the request carries an Idempotency-Key whose first answer it repeats
   * (runService.replayByKey): then that answer, as a replay. Outside the handler: nothing is
   * allocated for it on a start.
   */
  async function replayAfter(
    refusal: AppError,
    o: { id: number; slug: string },
    { params, query, request, principal, set }: StartRunContext,
  ): Promise<Response> {
    const byKey = await runService.replayByKey(
      principal,
      o.id,
      params.workflow,
      request,
      query.version ?? null,
    );
    if (byKey?.replay) {
      const r = byKey.replay;
      return answer(r.status, r.body, { ...r.headers, "idempotent-replayed": "true" }, set);
    }
    if (byKey?.replayRun) return replayRun(byKey.replayRun, o, request, principal.user.id, set);
    throw refusal;
  }

  /**
   * A retry of a request whose run was committed but never answered (its server died in between):
   * the run as it is now, 201 once final (then recorded as the key's answer) or 202, as a replay.
   */
  async function replayRun(
    id: string,
    org: { id: number; slug: string },
    request: Request,
    userId: number,
    set: StartRunContext["set"],
  ): Promise<Response> {
    const run = await runs.get(org.id, id);
    if (!run) throw notFound("Run");
    const final = isFinal(run.status);
    const body = presentRun(origin(request), org.slug, run, final ? null : executor.live(run.id));
    const headers: Record<string, string> = { location: body.url };
    if (!final) headers["retry-after"] = RETRY_AFTER_S;
    const text = JSON.stringify(body);
    const key = request.headers.get("idempotency-key");
    if (final && key) await deps.idempotency.complete(userId, key, { status: 201, headers, body: text });
    return answer(final ? 201 : 202, text, { ...headers, "idempotent-replayed": "true" }, set);
  }
}

/**
 * Refusals of a run start that a retry of an answered request replays over: the key used with
 * another request (its workflow's slug now another workflow's), or that new workflow's state.
 */
const REPLAYABLE_REFUSALS = new Set(["idempotency_key_reused", "workflow_inactive", "no_workflow_steps"]);

/** What every answer of this route carries: the security headers, JSON, and no shared caching. */
const COMMON_HEADERS = new Headers({
  ...DEFAULT_HEADERS,
  "content-type": "application/json",
  "cache-control": "no-store",
});

/**
 * The answer, already serialized: a Response skips the framework's second encoding pass over the
 * run. Its headers are a copy of the common ones (cheaper than a Response built from a record:
 * 0.6 against 1.4 µs, docs/benchmarks.md), what other hooks left in `set` (Warning, RateLimit-*),
 * then its own; `set` is left empty, or the framework would copy the whole Response into a new
 * one (~8 µs a run). A replay is built the same way, so it carries what the first answer did.
 */
function answer(
  status: number,
  body: string,
  own: Record<string, string>,
  set: StartRunContext["set"],
): Response {
  const headers = new Headers(COMMON_HEADERS);
  const left = set.headers as Record<string, string>;
  for (const k in left) {
    const v = left[k]!;
    if (DEFAULT_HEADERS[k] !== v) headers.set(k, v);
    delete left[k];
  }
  for (const k in own) headers.set(k, own[k]!);
  return new Response(body, { status, headers });
}
