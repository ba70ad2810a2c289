// Migration 21's second part, after its SQL made pinned_documents: every step_configs row whose
// config pins documents is rewritten to name them by digest (src/workflows/pinned-documents.ts),
// each document stored once. The row keeps its key (the digest of the whole config), so every
// snapshot that names it reads the same config. In the migration's transaction, in one pass over
// the rows, a few at a time: a config may hold 8 MiB, an installation gigabytes of them. On
// 15,000 configs (8.25 GB, docs/deploy.md): 73 s on SQLite, 166 s on PostgreSQL; picking rows by
// LIKE and reading each again, each document sent again for every config pinning it, took 74 s
// and 224 s (PostgreSQL decompressed every config twice).
import type { Database } from "bun:sqlite";
import { joinPinned, splitPinned } from "../../workflows/pinned-documents.ts";
import type { PgDb } from "../postgres.ts";

// Rows that cannot pin anything are not parsed: the split changes only these keys, and
// JSON.stringify (the only writer of step_configs) never escapes a letter of them.
const mayPin = (text: string) => text.includes('"resources"') || text.includes('"documents"');

/** Rows per read on PostgreSQL: at most 8 MiB each. */
const ROWS_PER_FETCH = 8;

type Row = { sha256: string; config: string; created_at: string };

/** The row's new text and its documents, or null when it pins none. Throws if not lossless. */
function convert(
  key: string,
  text: string,
  at: string,
): { config: string; documents: Map<string, string> } | null {
  const whole = JSON.parse(text) as Record<string, unknown>;
  const split = splitPinned(whole);
  if (!split.documents.size) return null;
  const parsed = new Map([...split.documents].map(([d, t]) => [d, JSON.parse(t) as unknown]));
  // The API must serve the very bytes it served before: checked before anything is written.
  if (JSON.stringify(joinPinned(split.config, parsed, `step config ${key}`)) !== text)
    throw new Error(`migration 21: step config ${key} (${at}) would not read back as stored`);
  return { config: JSON.stringify(split.config), documents: split.documents };
}

/**
 * One row converted: its new text, and those of its documents not written yet in this migration
 * (a document pinned by a thousand configs is sent once, not a thousand times).
 */
function rewrite(
  r: Row,
  engine: string,
  written: Set<string>,
): { config: string; documents: string[][] } | null {
  const c = mayPin(r.config) ? convert(r.sha256, r.config, engine) : null;
  if (!c) return null;
  const documents = [...c.documents].filter(([d]) => !written.has(d));
  for (const [d] of documents) written.add(d);
  return { config: c.config, documents: documents.map(([d, body]) => [d, body, r.created_at]) };
}

export function pinnedDocumentsSqlite(db: Database): void {
  // By key, from the last one read: each row read once, and a row rewritten is never met again.
  const next = db.query(
    "SELECT sha256, config, created_at FROM step_configs WHERE sha256 > ? ORDER BY sha256 LIMIT 1",
  );
  const putDocument = db.query(
    "INSERT INTO pinned_documents (sha256, body, created_at) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
  );
  const update = db.query("UPDATE step_configs SET config = ? WHERE sha256 = ?");
  const written = new Set<string>();
  for (let r = next.get("") as Row | null; r; r = next.get(r.sha256) as Row | null) {
    const c = rewrite(r, "SQLite", written);
    if (!c) continue;
    for (const d of c.documents) putDocument.run(...d);
    update.run(c.config, r.sha256);
  }
}

export async function pinnedDocumentsPostgres(tx: Pick<PgDb["sql"], "unsafe">): Promise<void> {
  // A cursor sees the rows as they were when it was declared (PostgreSQL's cursors are
  // insensitive): a row rewritten is never met again.
  await tx.unsafe("DECLARE m0021 NO SCROLL CURSOR FOR SELECT sha256, config, created_at FROM step_configs");
  const written = new Set<string>();
  for (;;) {
    const rows = (await tx.unsafe(`FETCH ${ROWS_PER_FETCH} FROM m0021`)) as Row[];
    for (const r of rows) {
      const c = rewrite(r, "PostgreSQL", written);
      if (!c) continue;
      for (const d of c.documents)
        await tx.unsafe(
          "INSERT INTO pinned_documents (sha256, body, created_at) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING",
          d,
        );
      await tx.unsafe("UPDATE step_configs SET config = $1 WHERE sha256 = $2", [c.config, r.sha256]);
    }
    if (rows.length < ROWS_PER_FETCH) break;
  }
  await tx.unsafe("CLOSE m0021");
}
