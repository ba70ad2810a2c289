// Entity tags in If-Match and If-None-Match (RFC 9110 §8.8.3, §13.1.1, §13.1.2): the header is
// `*` or a comma-separated list of tags, each `"opaque"` or weak `W/"opaque"`; empty list elements
// are allowed (§5.6.1). If-Match compares strongly (a weak tag never matches), If-None-Match
// weakly (`W/"7"` matches `"7"`).

import { invalidField } from "../errors.ts";

/** The 400 of a header that is neither `*` nor a list of entity tags (`If-Match: 7`, unquoted). */
export const malformedCondition = (name: "If-Match" | "If-None-Match") =>
  invalidField(name, `${name} is * or a list of entity tags in double quotes, such as "7".`);

// opaque-tag = DQUOTE *etagc DQUOTE; etagc = %x21 / %x23-7E / obs-text
const TAG = /^(W\/)?"([\x21\x23-\x7E\x80-\xFF]*)"$/;

/** `*`, the list's tags, or null when the value is neither (`7`, `"7`, `W/7`, `,`). */
export function entityTags(header: string): "*" | { weak: boolean; opaque: string }[] | null {
  const h = header.trim();
  if (h === "*") return "*";
  const tags: { weak: boolean; opaque: string }[] = [];
  for (const item of h.split(",")) {
    const e = item.trim();
    if (e === "") continue;
    const m = TAG.exec(e);
    if (!m) return null;
    tags.push({ weak: m[1] !== undefined, opaque: m[2] ?? "" });
  }
  return tags.length ? tags : null;
}

const parse = (etag: string) => {
  const m = TAG.exec(etag);
  return { weak: m?.[1] !== undefined, opaque: m?.[2] ?? etag };
};

/** If-Match holds for the current `etag` (strong comparison); null when the header is malformed. */
export function ifMatchHolds(header: string, etag: string): boolean | null {
  const tags = entityTags(header);
  if (tags === null) return null;
  if (tags === "*") return true;
  const cur = parse(etag);
  return !cur.weak && tags.some((t) => !t.weak && t.opaque === cur.opaque);
}

/**
 * If-None-Match names the current `etag` (weak comparison), so a GET or HEAD answers 304; null when
 * the header is malformed.
 */
export function noneMatchNames(header: string, etag: string): boolean | null {
  const tags = entityTags(header);
  if (tags === null) return null;
  if (tags === "*") return true;
  const cur = parse(etag);
  return tags.some((t) => t.opaque === cur.opaque);
}
