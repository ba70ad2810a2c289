// The database's clock, for the times several nodes write and compare: a run claim's lease
// (src/runs/store.ts) and a webhook delivery's lease and due time (src/webhooks/outbox-store.ts).
// A node's own clock may be ahead of or behind the others' (docs/deploy.md, "Clocks"); a lease
// written and judged on the database's clock cannot be made to look expired, or kept past its end,
// by one node's skew. Both expressions give the ISO text every other time column holds (UTC,
// milliseconds, `…Z`), so they compare as text with the node-written times.
//
// Which instant. PostgreSQL: statement_timestamp(), the time the statement began — one value for
// every row a statement writes or compares, like SQLite's 'now' (fixed for one sqlite3_step), so
// both backends mean the same thing. Not now(): that is the transaction's start, and a claim or a
// renewal inside a group-commit transaction (src/runs/batch.ts) would be dated from before the
// statements queued ahead of it. Not clock_timestamp(): it changes from row to row and is volatile,
// so a comparison with it cannot use the lease index. A program that compares in two statements
// and needs them to agree reads the time once (dbNow) and binds it.
import type { Dialect } from "./program.ts";

const PG_ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/**
 * SQL for the database's time now plus `?` milliseconds (one parameter, an integer; NULL gives
 * NULL), as ISO text. SQLite's fractional-seconds modifier is exact to the millisecond (checked for
 * every 7th value from −100 s to +4000 s).
 */
export function dbTimeIn(dialect: Dialect): string {
  return dialect === "postgres"
    ? `to_char((statement_timestamp() + CAST(? AS INTEGER) * interval '1 millisecond') AT TIME ZONE 'UTC', ${PG_ISO})`
    : `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', (CAST(? AS INTEGER) / 1000.0) || ' seconds')`;
}

/** SQL for the database's time now, as ISO text (no parameter). */
export function dbNow(dialect: Dialect): string {
  return dialect === "postgres"
    ? `to_char(statement_timestamp() AT TIME ZONE 'UTC', ${PG_ISO})`
    : `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
}
