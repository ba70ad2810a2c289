// If-Match and If-None-Match on the resources that have no entity tag: everything but a workflow
// (src/workflows/etag.ts), a run's content and a run's report (src/http/tagged-read.ts). RFC 9110 §13.1.1: If-Match `*` holds when the resource exists; a list
// of tags holds only if one is the resource's current tag, and a resource without one matches
// none, so the request is a 412 and changes nothing. §13.1.2: If-None-Match `*` fails when the
// resource exists; a list of tags names none of its (absent) tags and holds. Until 2026-11-29
// every route but a workflow's ignored both headers: `DELETE …/webhooks/7/` with `If-Match: "x"`
// deleted the webhook.
//
// Judged after the access checks and once the target is known to exist (§13.2.1: a request that
// would be a 401, 403 or 404 without the headers gets that answer), before anything is changed.
// Each unsafe route says how with its `preconditions` option (the macro below):
// - "exists": the route's access checks (the gate, src/app.ts) establish that the target exists:
//   a collection one POSTs to, the org itself, the instance's settings, a sign-in;
// - a function: the target's lookup (a member, a webhook, a step …), run only when a condition
//   fails, throwing the 404 (or 403) the request would get without the headers;
// - "own": the handler judges the headers itself (a workflow's ETag, the run start that the
//   sync-run lane shares, a cancel whose 403 depends on the run).
// A GET or HEAD of a single resource without an ETag declares "read": judged on the answer the
// route found (`read` below).
// test/preconditions-coverage.test.ts fails for an unsafe route that declares none.
import { Elysia } from "elysia";
import { AppError } from "../errors.ts";
import { entityTags, malformedCondition } from "./conditional.ts";

const noTag = () =>
  new AppError(
    412,
    "precondition_failed",
    "If-Match names an entity tag, but this resource has none (only a workflow, a run's content and a run's report have one): nothing was changed.",
  );

const exists = () =>
  new AppError(
    412,
    "precondition_failed",
    "If-None-Match is * and the resource exists: nothing was changed.",
  );

/**
 * The refusal the request's If-Match / If-None-Match call for on an existing resource without an
 * entity tag: a 400 for a malformed header, a 412 for a false condition (If-Match first, §13.2.2);
 * null when the request may go on.
 */
export function untaggedRefusal(headers: Headers): AppError | null {
  const ifMatch = headers.get("if-match");
  if (ifMatch !== null) {
    const tags = entityTags(ifMatch);
    if (tags === null) return malformedCondition("If-Match");
    if (tags !== "*") return noTag();
  }
  const ifNoneMatch = headers.get("if-none-match");
  if (ifNoneMatch !== null) {
    const tags = entityTags(ifNoneMatch);
    if (tags === null) return malformedCondition("If-None-Match");
    if (tags === "*") return exists();
  }
  return null;
}

/** untaggedRefusal, thrown: for a handler that has just found its target. */
export function checkUntagged(headers: Headers): void {
  const refusal = untaggedRefusal(headers);
  if (refusal) throw refusal;
}

/** What a target's lookup gets: the route's context after authentication. */
// biome-ignore lint/suspicious/noExplicitAny: each route's own params and principal
export type TargetLookup = (ctx: any) => Promise<unknown>;
export type Preconditions = "exists" | "own" | "read" | TargetLookup;

/** The beforeHandle hooks of the macro: a route whose hooks hold one has declared its target. */
const declaredHooks = new WeakSet<object>();
/** Whether a route's beforeHandle hooks include the preconditions macro's. */
export const declaresPreconditions = (hooks: unknown): boolean =>
  Array.isArray(hooks) && hooks.some((h) => declaredHooks.has(((h as { fn?: object })?.fn ?? h) as object));

const own = () => {};
declaredHooks.add(own);

/**
 * GET and HEAD of a resource without an entity tag (`preconditions: "read"`): judged on the
 * answer the route found (its 401, 403 and 404 come first, §13.2.1), which a safe method may
 * compute freely. If-Match with a list of tags is a 412 (§13.1.1); then If-None-Match `*` names
 * the existing resource: 304 Not Modified, no body (§13.1.2, §13.2.2 step 3). A list of tags in
 * If-None-Match names none of its (absent) tags: the 200. Lists (collections) take no part.
 */
const read = (ctx: {
  request: Request;
  set: { status?: number | string; headers: Record<string, unknown> };
}) => {
  const h = ctx.request.headers;
  const ifMatch = h.get("if-match");
  if (ifMatch !== null) {
    const tags = entityTags(ifMatch);
    if (tags === null) throw malformedCondition("If-Match");
    if (tags !== "*") throw noTag();
  }
  const ifNoneMatch = h.get("if-none-match");
  if (ifNoneMatch === null) return;
  const tags = entityTags(ifNoneMatch);
  if (tags === null) throw malformedCondition("If-None-Match");
  if (tags !== "*") return;
  ctx.set.status = 304;
  // No body, so no media type (the app's hook set one for the JSON the route returned).
  delete ctx.set.headers["content-type"];
  return new Response(null, { status: 304 });
};
declaredHooks.add(read);

/** The `preconditions` route option (used by authPlugin, so every route module has it). */
export const preconditionsPlugin = new Elysia({ name: "preconditions" }).macro({
  preconditions: (target: Preconditions) => {
    if (target === "own") return { beforeHandle: own };
    if (target === "read") return { afterHandle: read };
    const hook = async (ctx: { request: Request }) => {
      const h = ctx.request.headers;
      // Nearly every request: no header, nothing to read.
      if (!h.has("if-match") && !h.has("if-none-match")) return;
      const refusal = untaggedRefusal(h);
      if (!refusal) return;
      // The answer the request gets without the headers comes first (§13.2.1): a 404 from here.
      if (target !== "exists") await target(ctx);
      throw refusal;
    };
    declaredHooks.add(hook);
    return { beforeHandle: hook };
  },
});
