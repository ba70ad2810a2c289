// An entry as JSON (the API, JSON Lines) and as a CSV row.
import { parseJson } from "../db/util.ts";
import { AUDIT_COLUMNS } from "./append.ts";
import type { AuditItem } from "./store.ts";

export function presentEntry(e: AuditItem) {
  return {
    seq: e.seq,
    created_at: e.created_at,
    org_id: e.org_id,
    org_slug: e.org_slug,
    actor: {
      type: e.actor_type,
      user_id: e.actor_user_id,
      username: e.actor_username,
      token_id: e.token_id,
      session_id: e.session_id,
      ip: e.client_ip,
    },
    action: e.action,
    target: { type: e.target_type, id: e.target_id, name: e.target_name },
    changes: parseJson<Record<string, unknown> | null>(e.changes, null),
    prev_hash: e.prev_hash,
    hash: e.hash,
  };
}

/** The stored columns, with the org's slug beside its id (the export's reader needs no lookup). */
export const CSV_COLUMNS = AUDIT_COLUMNS.flatMap((c) => (c === "org_id" ? [c, "org_slug"] : [c]));

/**
 * RFC 4180 quoting. A cell a spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a
 * leading apostrophe (OWASP, CSV injection): names and URLs in the log come from users. So does
 * what follows a `;` that a formula could start after: a spreadsheet whose list separator is `;`
 * (Excel in most European locales) splits the line there, quotes or not, and a token named
 * `x;=cmd|'/C calc'!A0;` was a formula cell in it. The JSON Lines export keeps every value
 * exactly, for recomputing hashes.
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return "";
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  s = s.replace(/;(?=["\s]*[=+\-@]|[\t\r])/g, ";'");
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export const csvRow = (e: AuditItem) =>
  `${CSV_COLUMNS.map((c) => csvCell((e as unknown as Record<string, unknown>)[c])).join(",")}\r\n`;
