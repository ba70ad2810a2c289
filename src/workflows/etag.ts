// A workflow's ETag is its version (`"7"`): every change adds one (CONTRACT §2). If-Match on a
// PUT or PATCH makes the edit conditional on it (RFC 9110 §13.1.1): a client that read version 7
// changes version 7 or nothing, where concurrent edits otherwise all land (fresh.ts). If-None-Match
// on a GET answers 304 while the workflow is still at the version named (§13.1.2). A header that
// is neither `*` nor a list of entity tags (`If-Match: 7`, unquoted) is a 400 naming it: read as a
// tag that matches nothing it was a 412 "names another version" for the very version it meant, and
// an If-None-Match a 200 forever.
import { ifMatchHolds as matchHolds, malformedCondition, noneMatchNames } from "../http/conditional.ts";
import { AppError } from "../errors.ts";

export const etagOf = (version: number) => `"${version}"`;

/** RFC 9110 §13.1.1: `*`, or a list of entity tags compared strongly (a weak W/"7" never matches). */
export function ifMatchHolds(header: string, version: number): boolean {
  const holds = matchHolds(header, etagOf(version));
  if (holds === null) throw malformedCondition("If-Match");
  return holds;
}

/**
 * RFC 9110 §13.1.2: true when If-None-Match names the current version, so a GET or HEAD answers
 * 304 Not Modified. The comparison is weak (`W/"7"` matches as `"7"` does); `*` matches any.
 */
export function noneMatchFails(header: string, version: number): boolean {
  const names = noneMatchNames(header, etagOf(version));
  if (names === null) throw malformedCondition("If-None-Match");
  return names;
}

/** The conditional headers of an edit of a workflow (PUT, PATCH, DELETE, a restore). */
export interface Preconditions {
  ifMatch?: string | undefined;
  ifNoneMatch?: string | undefined;
}

/**
 * RFC 9110 §13.2.2 for an edit of the workflow at `version`, after the access checks: If-Match
 * first, then If-None-Match, which on a method other than GET and HEAD is a 412 when it names the
 * current version or is `*` (§13.1.2: "PUT only if it does not exist yet" must not overwrite).
 */
export function checkPreconditions(c: Preconditions | undefined, version: number) {
  if (c?.ifMatch !== undefined && !ifMatchHolds(c.ifMatch, version)) throw preconditionFailed(version);
  if (c?.ifNoneMatch !== undefined && noneMatchFails(c.ifNoneMatch, version))
    throw new AppError(
      412,
      "precondition_failed",
      `If-None-Match names the workflow's current version (ETag ${etagOf(version)}) or is *: nothing was changed.`,
    );
}

export const preconditionFailed = (version: number) =>
  new AppError(
    412,
    "precondition_failed",
    `If-Match names another version than the workflow's current one (ETag ${etagOf(version)}): read it again.`,
  );
