// The hash chain of the audit log (docs/audit.md, "Tamper evidence"). Both serializations are
// defined here and nowhere else; an external verifier needs only this file's rules:
//
// 1. `changes` is stored as canonical JSON: objects with their keys sorted by UTF-16 code units,
//    no whitespace, strings and numbers as ECMAScript's JSON.stringify writes them (the values
//    are strings, integers, booleans and null). Keys whose value is undefined are left out.
// 2. An entry's hash is the lowercase hex SHA-256 of the UTF-8 bytes of JSON.stringify of the
//    array [VERSION, seq, prev_hash, created_at, org_id, actor_type, actor_user_id,
//    actor_username, token_id, session_id, client_ip, action, target_type, target_id,
//    target_name, changes] — integers as numbers, text as strings (changes as its stored text),
//    absent values as null.
// 3. prev_hash is the hash of the entry before (seq − 1); the first entry's is GENESIS.
import { createHash } from "node:crypto";
import type { AuditRow } from "./types.ts";

/** Names the serialization; a future change of rule 2 gets a new name, old entries keep theirs. */
export const VERSION = "assay-audit/1";
export const GENESIS = "0".repeat(64);

/** Rule 1. */
export function canonicalJson(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "number") return Number.isFinite(v) ? JSON.stringify(v) : "null";
  if (typeof v === "string" || typeof v === "boolean") return JSON.stringify(v);
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
  }
  return "null";
}

export type Hashed = Omit<AuditRow, "hash">;

/** Rule 2: the text that is hashed. */
export function serialize(e: Hashed): string {
  return JSON.stringify([
    VERSION,
    e.seq,
    e.prev_hash,
    e.created_at,
    e.org_id,
    e.actor_type,
    e.actor_user_id,
    e.actor_username,
    e.token_id,
    e.session_id,
    e.client_ip,
    e.action,
    e.target_type,
    e.target_id,
    e.target_name,
    e.changes,
  ]);
}

export const sha256 = (text: string | Uint8Array) => createHash("sha256").update(text).digest("hex");

export const hashOf = (e: Hashed): string => sha256(serialize(e));
