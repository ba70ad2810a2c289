// Migration 21's second part, after its SQL made pinned_documents: every step_configs row whose
// config pins documents is rewritten to name them by digest (src/workflows/pinned-documents.ts),
// each document stored once. The row keeps its key (the digest of the whole config), so every
// snapshot that names it reads the same config. In the migration's transaction, one row at a
// time: a config may hold 8 MiB.
import type { Database } from "bun:sqlite";
import { joinPinned, splitPinned } from "../../workflows/pinned-documents.ts";
import type { PgDb } from "../postgres.ts";

// Rows that cannot pin anything are not read: the split changes only these keys.
const MAY_PIN = `config LIKE '%"resources"%' OR config LIKE '%"documents"%'`;

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

export function pinnedDocumentsSqlite(db: Database): void {
  const keys = db
    .query(`SELECT sha256, created_at FROM step_configs WHERE ${MAY_PIN} ORDER BY sha256`)
    .all() as {
    sha256: string;
    created_at: string;
  }[];
  const read = db.query("SELECT config FROM step_configs WHERE sha256 = ?");
  const putDocument = db.query(
    "INSERT INTO pinned_documents (sha256, body, created_at) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
  );
  const update = db.query("UPDATE step_configs SET config = ? WHERE sha256 = ?");
  for (const k of keys) {
    const row = read.get(k.sha256) as { config: string } | null;
    const c = row && convert(k.sha256, row.config, "SQLite");
    if (!c) continue;
    for (const [d, body] of c.documents) putDocument.run(d, body, k.created_at);
    update.run(c.config, k.sha256);
  }
}

export async function pinnedDocumentsPostgres(tx: Pick<PgDb["sql"], "unsafe">): Promise<void> {
  const keys = (await tx.unsafe(
    `SELECT sha256, created_at FROM step_configs WHERE ${MAY_PIN} ORDER BY sha256`,
  )) as { sha256: string; created_at: string }[];
  for (const k of keys) {
    const [row] = (await tx.unsafe("SELECT config FROM step_configs WHERE sha256 = $1", [k.sha256])) as {
      config: string;
    }[];
    const c = row && convert(k.sha256, row.config, "PostgreSQL");
    if (!c) continue;
    for (const [d, body] of c.documents)
      await tx.unsafe(
        "INSERT INTO pinned_documents (sha256, body, created_at) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING",
        [d, body, k.created_at],
      );
    await tx.unsafe("UPDATE step_configs SET config = $1 WHERE sha256 = $2", [c.config, k.sha256]);
  }
}
