// Copies every row of one Assay database into another (`assay db copy`): SQLite data dir →
// PostgreSQL to move an installation, or back. Both sides are migrated to the same schema first;
// rows keep their ids; each table is copied in key order, in chunks of one transaction each, then
// verified by row count and a SHA-256 over its rows in key order, computed on both sides.
// Re-running a finished copy finds equal checksums and changes nothing; a target holding other
// rows is refused unless `replace` is set (then it is emptied first).
import { createHash } from "node:crypto";
import type { AnyDb } from "./open.ts";
import { type Db, type Param, all, count, run } from "./program.ts";

/** Tables in foreign-key order (parents first); `key` orders a table for chunks and checksums. */
export const COPY_TABLES: readonly { name: string; key: string[]; identity?: boolean }[] = [
  { name: "users", key: ["id"], identity: true },
  { name: "orgs", key: ["id"], identity: true },
  { name: "memberships", key: ["org_id", "user_id"] },
  { name: "api_tokens", key: ["id"], identity: true },
  { name: "web_sessions", key: ["id"], identity: true },
  { name: "settings", key: ["key"] },
  { name: "workflows", key: ["id"], identity: true },
  { name: "steps", key: ["id"], identity: true },
  { name: "pinned_documents", key: ["sha256"] },
  { name: "step_configs", key: ["sha256"] },
  { name: "workflow_versions", key: ["workflow_id", "version"] },
  { name: "org_schemas", key: ["id"], identity: true },
  { name: "submissions", key: ["id"], identity: true },
  { name: "runs", key: ["id"] },
  { name: "run_findings", key: ["run_id", "step_index", "chunk"] },
  { name: "content_chunks", key: ["run_id", "seq"] },
  { name: "idempotency_keys", key: ["user_id", "key"] },
  { name: "webhooks", key: ["id"], identity: true },
  { name: "webhook_deliveries", key: ["id"] },
  { name: "webhook_attempts", key: ["id"], identity: true },
  { name: "audit_log", key: ["seq"] },
  { name: "audit_head", key: ["id"] },
];

/**
 * Tables never copied: rows that belong to the schema itself, and transient state (rate-limit
 * counters start over).
 */
export const NOT_COPIED = ["cache_generation", "assay_schema_migrations", "rate_limits", "rate_events"];

/** Rows per chunk at most: every INSERT's parameters stay far below both engines' limits. */
const CHUNK = 500;
/**
 * Bytes of text and blobs per chunk at most (or one row, if larger): a chunk is read, held and
 * written at once. By rows alone, 500 submissions of up to 1 MiB each were one read and one
 * INSERT (a copy of 870 MB peaked at 2.9 GB of memory).
 */
export const CHUNK_BYTES = 8 * 1024 * 1024;
/** What a row's other columns (numbers) and its framing are counted as, against CHUNK_BYTES. */
const ROW_BYTES = 64;

export interface TableReport {
  table: string;
  rows: number;
  sha256: string;
}

type Row = Record<string, unknown>;

/** One value as text for the checksum: the same on both dialects. */
function canon(v: unknown): string {
  if (v === null || v === undefined) return "\u0000";
  if (v instanceof Uint8Array) return `x${Buffer.from(v).toString("hex")}`;
  if (typeof v === "bigint") return `n${v}`;
  if (typeof v === "number") return `n${v}`;
  return `s${String(v)}`;
}

/** The table's columns of text and blobs: the ones whose values may be large. */
async function wideColumns(db: Db, table: string): Promise<string[]> {
  const cols = await db.exec(
    all<{ name: string; type: string }>(
      db.dialect === "postgres"
        ? "SELECT attname AS name, format_type(atttypid, NULL) AS type FROM pg_attribute WHERE attrelid = to_regclass(CAST(? AS TEXT)) AND attnum > 0 AND NOT attisdropped"
        : "SELECT name, type FROM pragma_table_info(?)",
      table,
    ),
  );
  return cols
    .filter((c) => !/^(integer|bigint|smallint|real|double|numeric|boolean)/i.test(c.type))
    .map((c) => c.name);
}

/**
 * Reads a table in key order, chunk by chunk (keyset paging: no rows skipped twice). A chunk is
 * at most CHUNK rows and CHUNK_BYTES of text and blobs: their sizes are read first
 * (`octet_length`, which neither engine answers by reading the value), then as many rows as fit.
 * The source is read on one snapshot (copyInstallation), so both reads see the same rows.
 */
async function* chunks(db: Db, table: string, key: string[]): AsyncGenerator<Row[]> {
  const order = key.join(", ");
  const wide = await wideColumns(db, table);
  const size = wide.map((c) => `coalesce(octet_length(${c}), 0)`).join(" + ");
  let after: Row | null = null;
  for (;;) {
    // Keyset: (k1, k2) > (v1, v2) written out, as both engines understand it.
    let where = "";
    const params: Param[] = [];
    if (after) {
      const terms: string[] = [];
      for (let i = 0; i < key.length; i++) {
        const eq = key.slice(0, i).map((k) => `${k} = ?`);
        terms.push(`(${[...eq, `${key[i]} > ?`].join(" AND ")})`);
        for (const k of key.slice(0, i)) params.push(after[k] as Param);
        params.push(after[key[i]!] as Param);
      }
      where = `WHERE ${terms.join(" OR ")}`;
    }
    let limit = CHUNK;
    if (size) {
      const sizes = await db.exec(
        all<{ n: number | string }>(
          `SELECT ${size} AS n FROM ${table} ${where} ORDER BY ${order} LIMIT CAST(? AS INTEGER)`,
          ...params,
          CHUNK,
        ),
      );
      if (!sizes.length) return;
      let bytes = 0;
      limit = 0;
      for (const { n } of sizes) {
        bytes += Number(n) + ROW_BYTES;
        if (limit > 0 && bytes > CHUNK_BYTES) break;
        limit++;
      }
    }
    const rows: Row[] = await db.exec(
      all<Row>(
        `SELECT * FROM ${table} ${where} ORDER BY ${order} LIMIT CAST(? AS INTEGER)`,
        ...params,
        limit,
      ),
    );
    if (!rows.length) return;
    yield rows;
    after = rows.at(-1)!;
    if (rows.length < limit) return;
  }
}

/** Row count and SHA-256 of a table, rows in key order, columns by name. */
export async function tableDigest(db: Db, table: string, key: string[]): Promise<TableReport> {
  const h = createHash("sha256");
  let rows = 0;
  for await (const chunk of chunks(db, table, key))
    for (const r of chunk) {
      rows++;
      for (const c of Object.keys(r).sort()) h.update(`${c}=${canon(r[c])};`);
      h.update("\n");
    }
  return { table, rows, sha256: h.digest("hex") };
}

export async function digests(db: Db): Promise<TableReport[]> {
  const out: TableReport[] = [];
  for (const t of COPY_TABLES) out.push(await tableDigest(db, t.name, t.key));
  return out;
}

export type CopyOutcome =
  | { state: "copied"; tables: TableReport[] }
  | { state: "unchanged"; tables: TableReport[] }
  | { state: "refused"; reason: string };

export class CopyMismatch extends Error {
  override name = "CopyMismatch";
}

/**
 * The copy, the source read on one snapshot (a SQLite read transaction; on PostgreSQL a REPEATABLE
 * READ one): what a server still running on the source commits meanwhile is left out whole. Read
 * statement by statement, a PostgreSQL source gave the target runs whose submissions were
 * committed after the copy of `submissions` (a foreign-key failure, the target half written).
 */
export async function copyInstallation(
  from: AnyDb,
  to: Db,
  opts: { replace?: boolean; log?: (line: string) => void } = {},
): Promise<CopyOutcome> {
  if (from.dialect === "postgres") return from.snapshot((source) => copyDatabase(source, to, opts));
  from.raw.exec("BEGIN");
  try {
    return await copyDatabase(from, to, opts);
  } finally {
    if (from.raw.inTransaction) from.raw.exec("COMMIT");
  }
}

/** The copy itself. `log` receives one line per table. */
export async function copyDatabase(
  from: Db,
  to: Db,
  opts: { replace?: boolean; log?: (line: string) => void } = {},
): Promise<CopyOutcome> {
  const log = opts.log ?? (() => {});
  const source = await digests(from);
  const target = await digests(to);
  const same = source.every((s, i) => s.rows === target[i]!.rows && s.sha256 === target[i]!.sha256);
  if (same) {
    // The rows are there; the marks may not be (a copy made before they were carried).
    await resetIdentities(to, await highWater(from));
    return { state: "unchanged", tables: source };
  }
  const occupied = target.filter((t) => t.rows > 0);
  if (occupied.length && !opts.replace)
    return {
      state: "refused",
      reason: `the target already holds rows (${occupied.map((t) => `${t.table}: ${t.rows}`).join(", ")}); pass --replace to empty it first`,
    };
  if (occupied.length)
    await to.tx(function* () {
      for (const t of [...COPY_TABLES].reverse()) yield* run(`DELETE FROM ${t.name}`);
    });
  const ever = await highWater(from);
  for (const t of COPY_TABLES) {
    let copied = 0;
    for await (const rows of chunks(from, t.name, t.key)) {
      const cols = Object.keys(rows[0]!);
      const values = rows.flatMap((r) => cols.map((c) => (r[c] ?? null) as Param));
      const tuple = `(${cols.map(() => "?").join(", ")})`;
      await to.tx(() =>
        run(
          `INSERT INTO ${t.name} (${cols.join(", ")}) VALUES ${rows.map(() => tuple).join(", ")}`,
          ...values,
        ),
      );
      copied += rows.length;
    }
    log(`${t.name}: ${copied} rows`);
  }
  await resetIdentities(to, ever);
  // Caches of servers already running on the target must not keep what they read before.
  await to.exec(run("UPDATE cache_generation SET value = value + 1 WHERE id = 1"));
  const after = await digests(to);
  for (const [i, s] of source.entries()) {
    const t = after[i]!;
    if (s.rows !== t.rows || s.sha256 !== t.sha256)
      throw new CopyMismatch(
        `${s.table}: the copy does not match (${s.rows} rows ${s.sha256.slice(0, 12)}… → ${t.rows} rows ${t.sha256.slice(0, 12)}…)`,
      );
  }
  return { state: "copied", tables: after };
}

/**
 * The highest id each identity table ever handed out, deleted rows included (migration 18: an id
 * is never handed out twice): max(id), and the table's mark — SQLite's sqlite_sequence, or the
 * PostgreSQL sequence's last value (pg_sequences: readable by any role that may use the sequence,
 * null when never called).
 */
async function highWater(db: Db): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const t of COPY_TABLES.filter((x) => x.identity)) {
    const max = await db.exec(count(`SELECT coalesce(max(id), 0) AS n FROM ${t.name}`));
    out.set(t.name, Math.max(max, await markOf(db, t.name)));
  }
  return out;
}

function markOf(db: Db, table: string): Promise<number> {
  return db.exec(
    db.dialect === "postgres"
      ? count(
          `SELECT coalesce((SELECT last_value FROM pg_sequences WHERE format('%I.%I', schemaname, sequencename) = pg_get_serial_sequence('${table}', 'id')), 0) AS n`,
        )
      : count("SELECT coalesce(max(seq), 0) AS n FROM sqlite_sequence WHERE name = ?", table),
  );
}

/**
 * The target goes on after the highest id the source ever handed out, not after the highest
 * copied: a user deleted before the copy keeps their id to themselves on the target too. Never
 * lowered: a target emptied by --replace keeps the ids it handed out itself.
 */
async function resetIdentities(db: Db, ever: Map<string, number>): Promise<void> {
  for (const t of COPY_TABLES.filter((x) => x.identity)) {
    if (db.dialect === "sqlite") {
      // Only the tables whose ids SQLite never hands out twice (AUTOINCREMENT, migration 18) have
      // a mark; the others are never hard-deleted.
      const auto = await db.exec(
        count(
          "SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table' AND name = ? AND sql LIKE '%AUTOINCREMENT%'",
          t.name,
        ),
      );
      if (!auto) continue;
    }
    const max = await db.exec(count(`SELECT coalesce(max(id), 0) AS n FROM ${t.name}`));
    const n = Math.max(max, ever.get(t.name) ?? 0);
    if (n <= (await markOf(db, t.name))) continue;
    // The mark read again in the statement (PostgreSQL) or the transaction (SQLite) that raises it:
    // a server on the target may hand out ids meanwhile.
    if (db.dialect === "postgres")
      await db.exec(
        all(
          `SELECT setval(pg_get_serial_sequence('${t.name}', 'id'), greatest(CAST(? AS BIGINT), coalesce((SELECT last_value FROM pg_sequences WHERE format('%I.%I', schemaname, sequencename) = pg_get_serial_sequence('${t.name}', 'id')), 0)), true)`,
          n,
        ),
      );
    else
      await db.tx(function* () {
        const had = yield* count(
          "SELECT coalesce(max(seq), 0) AS n FROM sqlite_sequence WHERE name = ?",
          t.name,
        );
        yield* run("DELETE FROM sqlite_sequence WHERE name = ?", t.name);
        yield* run("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", t.name, Math.max(n, had));
      });
  }
}
