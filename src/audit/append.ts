// The one way an entry enters the log: a program that every audited write path runs inside its
// own transaction (`yield* audit(actor, change)`), so the entry commits with the change or not
// at all. Appenders take the chain's head row first and hold it until they commit: on PostgreSQL
// a row lock (INSERT … ON CONFLICT DO UPDATE waits for a concurrent appender, then sees its
// committed head), on SQLite the database's write lock. The chain stays one line. Two entries of
// one transaction — two cancels in one group commit (src/runs/batch.ts), whose programs
// PostgreSQL runs side by side — append one after the other (`alone`): interleaved, both read the
// head before either wrote its hash, and the second entry's prev_hash named the entry before the
// first (the chain broke under concurrent cancels, 2026-11-29).
import { type Program, alone, get, run } from "../db/program.ts";
import { now } from "../db/util.ts";
import { changesNothing, changesText } from "./changes.ts";
import { GENESIS, hashOf } from "./chain.ts";
import type { Actor, AuditRow, Change } from "./types.ts";

const TAKE_HEAD =
  "INSERT INTO audit_head (id, seq, hash) VALUES (1, 1, ?) ON CONFLICT (id) DO UPDATE SET seq = audit_head.seq + 1 RETURNING seq, hash";

/** The log's columns in the order rows are written (and restored, by tests of verify). */
export const AUDIT_COLUMNS = [
  "seq",
  "created_at",
  "org_id",
  "actor_type",
  "actor_user_id",
  "actor_username",
  "token_id",
  "session_id",
  "client_ip",
  "action",
  "target_type",
  "target_id",
  "target_name",
  "changes",
  "prev_hash",
  "hash",
] as const satisfies readonly (keyof AuditRow)[];

export const INSERT_AUDIT = `INSERT INTO audit_log (${AUDIT_COLUMNS.join(", ")}) VALUES (${AUDIT_COLUMNS.map(() => "?").join(", ")})`;

/** A row's values in AUDIT_COLUMNS order, for INSERT_AUDIT. */
export const auditValues = (row: AuditRow) => AUDIT_COLUMNS.map((c) => row[c]);

/**
 * A name as the client sent it (a failed sign-in's username) may hold U+0000, which PostgreSQL
 * text cannot: kept as U+FFFD on both backends, so the entry is written and hashes alike.
 */
const storable = (s: string | null): string | null => (s === null ? null : s.replaceAll("\u0000", "\uFFFD"));

/**
 * Appends one entry; returns it (null: the change changed nothing, no entry). Run it last in the
 * transaction: the head stays locked until commit.
 */
export function* audit(actor: Actor, change: Change): Program<AuditRow | null> {
  // A request that changed nothing (a role set to the one it was, a restore of an active org):
  // no state changed, so no entry (docs/audit.md: "every request that changes state").
  if (changesNothing(change)) return null;
  return yield* alone(append(actor, change));
}

/** Takes the head, writes the entry and moves the head to it: nothing of the transaction between. */
function* append(actor: Actor, change: Change): Program<AuditRow> {
  // The head's seq is already the new entry's; its hash is still the previous entry's.
  const head = (yield* get<{ seq: number | string; hash: string }>(TAKE_HEAD, GENESIS))!;
  const e: Omit<AuditRow, "hash"> = {
    seq: Number(head.seq),
    // Taken after the head: entries are in time order as well as in seq order.
    created_at: now(),
    org_id: change.org_id,
    actor_type: actor.type,
    actor_user_id: actor.user_id,
    actor_username: storable(actor.username),
    token_id: actor.token_id,
    session_id: actor.session_id,
    client_ip: actor.ip,
    action: change.action,
    target_type: change.target_type,
    target_id: change.target_id == null ? null : String(change.target_id),
    target_name: storable(change.target_name ?? null),
    changes: changesText(change),
    prev_hash: head.hash,
  };
  const row: AuditRow = { ...e, hash: hashOf(e) };
  yield* run(INSERT_AUDIT, ...auditValues(row));
  yield* run("UPDATE audit_head SET hash = ? WHERE id = 1", row.hash);
  return row;
}

/** Several changes of one request (an org created with its first Admin), in order. */
export function* auditAll(actor: Actor, changes: Change[]): Program<void> {
  for (const c of changes) yield* audit(actor, c);
}
