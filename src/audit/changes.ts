// What an entry says changed: before/after of the fields, secrets never included.
import { canonicalJson, sha256 } from "./chain.ts";
import type { Change } from "./types.ts";

/**
 * Fields never written to the log, whatever a write path hands over: password hashes, token and
 * session digests, signing secrets, CSRF tokens. A safety net — the write paths already name only
 * the fields they mean to record (docs/audit.md).
 */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  "password",
  "password_hash",
  "digest",
  "token",
  "secret",
  "previous_secret",
  "csrf",
  "current_password",
  "new_password",
]);

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/** The record without secret fields and without undefined values (top level: our records). */
export function redact(r: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
  if (!r) return null;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) if (!SECRET_FIELDS.has(k) && v !== undefined) out[k] = v;
  return out;
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/**
 * Only what differs: keys whose values differ, and inside nested records (the steps of a
 * workflow, keyed by id) only the entries that differ. A key present on one side only is
 * shown on that side.
 */
export function diffRecords(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const b: Record<string, unknown> = {};
  const a: Record<string, unknown> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const x = before[k];
    const y = after[k];
    if (same(x, y)) continue;
    if (isPlain(x) && isPlain(y)) {
      const d = diffRecords(x, y);
      b[k] = d.before;
      a[k] = d.after;
      continue;
    }
    if (k in before) b[k] = x;
    if (k in after) a[k] = y;
  }
  return { before: b, after: a };
}

/**
 * An update that changed nothing: both sides given, equal once secrets are left out, and no fact
 * beside them. Such a request changes no state, so it writes no entry (docs/audit.md).
 */
export function changesNothing(c: Change): boolean {
  if (!c.before || !c.after || (c.context && Object.keys(redact(c.context) ?? {}).length)) return false;
  const d = diffRecords(redact(c.before)!, redact(c.after)!);
  return !Object.keys(d.before).length && !Object.keys(d.after).length;
}

/** The `changes` column: canonical JSON of {before, after, …context}, or null when empty. */
export function changesText(c: Change): string | null {
  const before = redact(c.before);
  const after = redact(c.after);
  const body: Record<string, unknown> = { ...redact(c.context) };
  if (before && after) Object.assign(body, diffRecords(before, after));
  else {
    if (before) body.before = before;
    if (after) body.after = after;
  }
  return Object.keys(body).length ? canonicalJson(body) : null;
}

/** Large bodies (step configs, stored schemas) are recorded by digest and size. */
export function digestOf(value: unknown): { sha256: string; bytes: number } {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? null);
  return { sha256: sha256(text), bytes: Buffer.byteLength(text, "utf8") };
}
