// GET and HEAD of a representation with an entity tag of its own: a run's content (its SHA-256,
// immutable) and a run's report (a digest of the bytes rendered, so it changes exactly when the
// report does: while the run executes, and after it ends whenever anything it shows changes — a
// workflow's slug, the public origin in its URLs, a renderer in a new build). RFC 9110 §13.2.2:
// the route's 401, 403, 404, 410 and 400 come first (§13.2.1), then If-Match, compared strongly
// (false: 412), then If-None-Match, compared weakly (naming the tag, or `*`: 304).
import { AppError } from "../errors.ts";
import { ifMatchHolds, malformedCondition, noneMatchNames } from "./conditional.ts";

/** A strong entity tag of bytes: 132 bits of their SHA-256 in base64url (as the web app's files). */
export const bytesTag = (bytes: Uint8Array) =>
  `"${new Bun.CryptoHasher("sha256").update(bytes).digest("base64url").slice(0, 22)}"`;

/**
 * Judges If-Match and If-None-Match for an answer that would be a 200 with `etag`: throws the 400
 * of a malformed header, the 412 (`mismatch`: its detail) of a false If-Match; true when the answer
 * is a 304 instead.
 */
export function notModified(headers: Headers, etag: string, mismatch: string): boolean {
  const ifMatch = headers.get("if-match");
  if (ifMatch !== null) {
    const holds = ifMatchHolds(ifMatch, etag);
    if (holds === null) throw malformedCondition("If-Match");
    if (!holds) throw new AppError(412, "precondition_failed", mismatch);
  }
  const ifNoneMatch = headers.get("if-none-match");
  if (ifNoneMatch === null) return false;
  const names = noneMatchNames(ifNoneMatch, etag);
  if (names === null) throw malformedCondition("If-None-Match");
  return names;
}

/**
 * The 304 for the 200's headers: the same ones (ETag, Cache-Control, Content-Disposition,
 * Retry-After …) but no Content-Type, and no Content-Length (RFC 9110 §15.4.5, §8.6).
 */
export function notModifiedAnswer(headers: Record<string, string>): Response {
  const { "content-type": _, "content-length": __, ...rest } = headers;
  return new Response(null, { status: 304, headers: rest });
}
