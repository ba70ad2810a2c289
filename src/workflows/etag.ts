// A workflow's ETag is its version (`"7"`): every change adds one (CONTRACT §2). If-Match on a
// PUT or PATCH makes the edit conditional on it (RFC 9110 §13.1.1): a client that read version 7
// changes version 7 or nothing, where concurrent edits otherwise all land (fresh.ts). If-None-Match
// on a GET answers 304 while the workflow is still at the version named (§13.1.2).
import { AppError } from "../errors.ts";

export const etagOf = (version: number) => `"${version}"`;

/** RFC 9110 §13.1.1: `*`, or a list of entity tags compared strongly (a weak W/"7" never matches). */
export function ifMatchHolds(header: string, version: number): boolean {
  const h = header.trim();
  if (h === "*") return true;
  return h.split(",").some((tag) => tag.trim() === etagOf(version));
}

/**
 * RFC 9110 §13.1.2: true when If-None-Match names the current version, so a GET or HEAD answers
 * 304 Not Modified. The comparison is weak (`W/"7"` matches as `"7"` does); `*` matches any.
 */
export function noneMatchFails(header: string, version: number): boolean {
  const h = header.trim();
  if (h === "*") return true;
  const tag = etagOf(version);
  return h.split(",").some((t) => t.trim().replace(/^W\//, "") === tag);
}

export const preconditionFailed = (version: number) =>
  new AppError(
    412,
    "precondition_failed",
    `If-Match names another version than the workflow's current one (ETag ${etagOf(version)}): read it again.`,
  );
