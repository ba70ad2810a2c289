// The writer thread (src/db/writer.ts): a second SQLite connection that commits the groups of
// final sync runs the main thread sends it, each in one transaction, and says how it went. It
// decides nothing: statements and values come whole from the main thread, except each run row's
// submission id, which only the submission's INSERT knows.
import { Database, type Statement } from "bun:sqlite";
import type { ToWriter } from "./writer-protocol.ts";

declare const self: Worker;

/** As the main connection's cache (src/db/sqlite.ts): a few dozen statements in practice. */
const STATEMENT_CACHE = 256;
let db: Database | null = null;
const statements = new Map<string, Statement>();

function prepared(sql: string): Statement {
  let st = statements.get(sql);
  if (!st) {
    if (statements.size >= STATEMENT_CACHE) statements.clear();
    st = db!.prepare(sql);
    statements.set(sql, st);
  }
  return st;
}

function open(path: string, autoCheckpoint: number) {
  // The main connection set the file up (WAL, migrations); these pragmas are per connection.
  db = new Database(path, { strict: true });
  // As the main connection's: 0 while the checkpoint thread runs. SQLite's default (1000 pages)
  // made this thread copy the WAL and sync the file inside its own commits, several times a
  // second under load (strace; docs/benchmarks.md, fifteenth pass).
  db.exec(`PRAGMA wal_autocheckpoint = ${autoCheckpoint}`);
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA temp_store = MEMORY");
  db.exec("PRAGMA cache_size = -2000");
}

function commit(m: Extract<ToWriter, { t: "group" }>): number[] {
  const d = db!;
  // IMMEDIATE: the write lock at BEGIN, waited for by the busy handler on this thread.
  d.exec("BEGIN IMMEDIATE");
  try {
    // What the runs' writes were decided on must still hold in this transaction's snapshot.
    const checked = new Set<string>();
    for (const r of m.runs)
      for (const q of r.reads) {
        const key = `${q.sql}\n${JSON.stringify(q.params)}\n${q.expect}`;
        if (checked.has(key)) continue;
        checked.add(key);
        if (JSON.stringify(prepared(q.sql).get(...q.params) ?? null) !== q.expect)
          throw new Error("stale read: the group is written on the main connection");
      }
    const sids: number[] = [];
    for (const r of m.runs)
      sids.push(Number(prepared(r.submission.sql).run(...r.submission.params).lastInsertRowid));
    for (const part of m.rowStatements) {
      const params = [];
      for (const i of part.runs) {
        const row = m.runs[i]!.row;
        row[part.sidAt] = sids[i]!;
        for (const p of row) params.push(p);
      }
      prepared(part.sql).run(...params);
    }
    for (const r of m.runs) for (const s of r.after) prepared(s.sql).run(...s.params);
    d.exec("COMMIT");
    return sids;
  } catch (e) {
    if (d.inTransaction) d.exec("ROLLBACK");
    throw e;
  }
}

self.onmessage = (e: MessageEvent<ToWriter>) => {
  const m = e.data;
  if (m.t === "autocheckpoint") {
    db?.exec(`PRAGMA wal_autocheckpoint = ${m.pages}`);
    return;
  }
  if (m.t === "open") {
    try {
      open(m.path, m.autoCheckpoint);
      self.postMessage({ t: "opened" });
    } catch (err) {
      self.postMessage({ t: "openfailed", message: String(err) });
    }
    return;
  }
  if (m.t === "stop") {
    db?.close();
    db = null;
    self.postMessage({ t: "stopped" });
    return;
  }
  try {
    self.postMessage({ t: "committed", id: m.id, sids: commit(m) });
  } catch (err) {
    self.postMessage({ t: "failed", id: m.id, message: String(err) });
  }
};
