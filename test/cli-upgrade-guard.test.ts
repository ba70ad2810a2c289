// The CLI works beside a running server, and opening a data dir migrates it: a newer `assay`
// run during an upgrade must not move the schema under a server of the build before when that
// server cannot run on it (a migration that is not additive, such as 19). It refuses and says what
// to do; once the server is stopped, the same command upgrades and works. SQLite only: on
// PostgreSQL, test/pg-upgrade-guard.test.ts.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LATEST, MIGRATIONS } from "../src/db/migrate.ts";
import { DB_FILE } from "../src/db/open.ts";
import {
  DataDirLockedError,
  holdFileLock,
  holdOffServers,
  LOCK_FILE,
  lockDataDir,
  PID_FILE,
} from "../src/db/lock.ts";
import { onPostgres } from "./helpers/backend.ts";
import { testTempDir } from "./helpers/temp.ts";

const MAIN = join(import.meta.dir, "../src/main.ts");
function assay(...args: string[]) {
  const { ASSAY_DATA_DIR: _d, ASSAY_DATABASE_URL: _u, ...env } = process.env;
  const p = Bun.spawnSync([process.execPath, MAIN, ...args], { env, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** A data dir as the build with migrations up to `upTo` left it, with one user. */
function dataDir(upTo: number): string {
  const dir = testTempDir("assay-upgrade-guard-");
  const db = new Database(join(dir, DB_FILE), { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  for (const m of MIGRATIONS.filter((x) => x.version <= upTo)) {
    db.exec(m.sqlite);
    db.exec(`PRAGMA user_version = ${m.version}`);
  }
  db.query(
    "INSERT INTO users (id, username, created_at) VALUES (1, 'root', '2026-11-20T10:00:00.000Z')",
  ).run();
  db.close();
  return dir;
}
const version = (dir: string) => {
  const db = new Database(join(dir, DB_FILE), { readonly: true });
  try {
    return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  } finally {
    db.close();
  }
};

const held: Database[] = [];
afterAll(() => {
  for (const h of held) h.close();
});

describe.skipIf(onPostgres)("the CLI beside a running server of the build before", () => {
  test("refuses an upgrade that server cannot run on, and performs it once the server is stopped", () => {
    const dir = dataDir(18);
    // The running server: its lock on server.lock, its PID beside it.
    const lock = holdFileLock(join(dir, LOCK_FILE))!;
    held.push(lock);
    writeFileSync(join(dir, PID_FILE), "4242\n");
    const message = `assay users: A server (PID 4242) is running on ${dir}, on a schema this build would upgrade in a way it cannot run on (19 step_configs, 21 pinned_documents). Stop it, run "assay migrate" with this build, then start this build.\n`;
    expect(assay("users", "list", "--data-dir", dir)).toEqual({ code: 1, out: "", err: message });
    expect(assay("migrate", "--data-dir", dir)).toMatchObject({ code: 1 });
    expect(version(dir)).toBe(18);
    lock.close();
    const r = assay("users", "list", "--data-dir", dir);
    expect(r.code).toBe(0);
    expect(r.out).toContain("root");
    expect(version(dir)).toBe(LATEST);
  });

  test("backup copies a data dir as it is: neither it nor the copy is upgraded", () => {
    // A newer binary taking the backup before an upgrade migrated the source first (19 is not
    // additive), and the release before then refused both the data dir and its "backup".
    const dir = dataDir(18);
    const file = join(testTempDir("assay-backup-"), "before-upgrade.db");
    const r = assay("backup", file, "--data-dir", dir);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`written to ${file}`);
    expect(version(dir)).toBe(18);
    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.query("PRAGMA user_version").get()).toEqual({ user_version: 18 });
      expect(copy.query("SELECT username FROM users").all()).toEqual([{ username: "root" }]);
    } finally {
      copy.close();
    }
  });

  test("it names the pending migrations that are not additive, and only those", () => {
    const dir = dataDir(17);
    const lock = holdFileLock(join(dir, LOCK_FILE))!;
    held.push(lock);
    // 18 and 20 are additive, 19 and 21 are not: still refused, 19 and 21 named alone.
    const r = assay("users", "list", "--data-dir", dir);
    expect(r.code).toBe(1);
    expect(r.err).toContain("(19 step_configs, 21 pinned_documents)");
    expect(version(dir)).toBe(17);
    lock.close();
  });

  test("the check holds servers off until the CLI has migrated: none starts in between", () => {
    const dir = dataDir(18);
    writeFileSync(join(dir, LOCK_FILE), "");
    const hold = holdOffServers(dir);
    expect("release" in hold).toBe(true);
    // Two CLI commands can hold at once; a server cannot start meanwhile.
    const other = holdOffServers(dir);
    expect("release" in other).toBe(true);
    expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    if ("release" in hold) hold.release();
    if ("release" in other) other.release();
    const lock = lockDataDir(dir);
    expect(holdOffServers(dir)).toEqual({ running: { pid: process.pid } });
    lock.release();
  });
});
