// API token format: "assay_" + 8-char lookup prefix + 43-char secret, all base64url.
// 32 random bytes → 256 bits of entropy (the issue asks ≥ 128). Only a SHA-256 digest is stored:
// tokens carry enough entropy that a slow password hash would only cost ~100 ms per request
// (STYLE: traps). The digest is compared with timingSafeEqual after a lookup by the prefix.
import { randomBytes, timingSafeEqual } from "node:crypto";

export const TOKEN_PREFIX = "assay_";
const LOOKUP_LEN = TOKEN_PREFIX.length + 8;
const TOKEN_RE = /^assay_[A-Za-z0-9_-]{51}$/;

export function newToken(): { token: string; prefix: string; digest: Uint8Array } {
  const token = TOKEN_PREFIX + randomBytes(6).toString("base64url") + randomBytes(32).toString("base64url");
  return { token, prefix: token.slice(0, LOOKUP_LEN), digest: digestOf(token) };
}

// Bun's one-shot SHA-256: half the cost of node:crypto's createHash on this hot path.
export const digestOf = (token: string): Uint8Array => Bun.SHA256.hash(token) as Uint8Array;

/** The digest as a string: the key of verified tokens cached in memory (never the token itself). */
export const digestKey = (token: string): string => Bun.SHA256.hash(token, "base64");

/** The lookup prefix of a well-formed token, or null (so garbage never reaches the database). */
export const lookupPrefix = (token: string): string | null =>
  TOKEN_RE.test(token) ? token.slice(0, LOOKUP_LEN) : null;

export function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
