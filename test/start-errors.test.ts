// What `assay` says when it cannot use its data: a data dir it may not write is named, with the
// reason (SQLite's own words named neither), and a server waiting for an unreachable PostgreSQL
// says so at once instead of 30 s of silence.
import { afterAll, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testConfig } from "../src/config.ts";
import { lockDataDir } from "../src/db/lock.ts";
import { startServer } from "../src/server.ts";
import { freshPgDatabase, onPostgres, otherConnection } from "./helpers/backend.ts";
import { sharedPgCluster } from "./helpers/pg-cluster.ts";
import { startTestServer } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

const dir = testTempDir("assay-start-errors-");
// Writable again, so that the temp dir can be removed (helpers/temp.ts) when not run as root.
afterAll(() => {
  chmodSync(dir, 0o700);
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    chmodSync(join(e.parentPath, e.name), e.isDirectory() ? 0o700 : 0o600);
});
const main = join(import.meta.dir, "../src/main.ts");

/**
 * The command as a user without write access to `dir`'s files: root ignores file modes, so as
 * root it runs as nobody (setpriv); otherwise the files are made read-only.
 */
const asNobody =
  process.getuid?.() === 0 ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
/**
 * Whether nobody can run this checkout at all: not when it lies under a directory only root may
 * enter (a clone in a 0700 temp dir). Those tests then say nothing and are skipped, not failed.
 */
const nobodyCanRun =
  asNobody.length === 0 ||
  Bun.spawnSync([...asNobody, "sh", "-c", 'test -r "$1" && test -x "$2"', "sh", main, process.execPath], {
    cwd: "/",
  }).exitCode === 0;

async function assay(args: string[], prefix: string[] = []) {
  const { ASSAY_DATA_DIR: _d, ASSAY_DATABASE_URL: _u, ...env } = process.env;
  const p = Bun.spawn([...prefix, process.execPath, main, ...args], {
    env,
    // Another user may not enter the test's own working directory; every path here is absolute.
    cwd: "/",
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, out, err };
}

/** Readable by everyone, writable by its owner only (and not at all when not run as root). */
function readOnly(path: string, mode: number) {
  chmodSync(path, asNobody.length ? mode : mode & 0o555);
}

test.skipIf(!nobodyCanRun)(
  "serve on a data dir it may not write: exit 1, the dir named, permission denied",
  async () => {
    const data = join(dir, "empty");
    mkdirSync(data);
    readOnly(dir, 0o755);
    readOnly(data, 0o755);
    const r = await assay(["serve", "--port", "0", "--data-dir", data], asNobody);
    expect(r).toEqual({
      code: 1,
      out: "",
      err: `assay serve: cannot write the data directory ${data} (permission denied)\n`,
    });
    expect(readdirSync(data)).toEqual([]);
  },
);

test.skipIf(!nobodyCanRun)(
  "an admin command on an installation it may not write: exit 1, the dir named, permission denied",
  async () => {
    const data = join(dir, "installed");
    chmodSync(dir, 0o755);
    const init = await assay(["init", "--org", "acme", "--admin", "root", "--data-dir", data]);
    expect(init.code).toBe(0);
    for (const f of readdirSync(data)) readOnly(join(data, f), 0o644);
    readOnly(data, 0o755);
    readOnly(dir, 0o755);
    const r = await assay(["users", "list", "--data-dir", data], asNobody);
    expect(r).toEqual({
      code: 1,
      out: "",
      err: `assay users: cannot write the data directory ${data} (permission denied)\n`,
    });
  },
);

/** Unreadable by anyone but root, or by anyone at all when not run as root. */
const privateMode = (path: string, mode: number) => chmodSync(path, asNobody.length ? mode : 0);

test.skipIf(!nobodyCanRun)(
  "an admin command on a data dir it may not enter, or a database file it may not read: exit 1, named, permission denied (not 'no installation')",
  async () => {
    const data = join(dir, "private");
    chmodSync(dir, 0o755);
    const init = await assay(["init", "--org", "acme", "--admin", "root", "--data-dir", data]);
    expect(init.code).toBe(0);
    // As the server leaves it: the dir 0700, its files 0600, the server's user's alone.
    privateMode(data, 0o700);
    try {
      expect(await assay(["users", "list", "--data-dir", data], asNobody)).toEqual({
        code: 1,
        out: "",
        err: `assay users: cannot read the data directory ${data} (permission denied)\n`,
      });
      // The dir opened up (0755) but not the database file in it.
      chmodSync(data, 0o755);
      privateMode(join(data, "assay.db"), 0o600);
      const copy = join(dir, "private-copy.db");
      expect(await assay(["backup", copy, "--data-dir", data], asNobody)).toEqual({
        code: 1,
        out: "",
        err: `assay backup: cannot read ${join(data, "assay.db")} (permission denied)\n`,
      });
      expect(existsSync(copy)).toBe(false);
    } finally {
      chmodSync(data, 0o700);
      chmodSync(join(data, "assay.db"), 0o600);
    }
  },
);

test("serve against a PostgreSQL that cannot be reached says it waits, once, then why it gave up", async () => {
  const url = "postgres://assay:secret@127.0.0.1:1/assay";
  const r = await assay(["serve", "--port", "0", "--database-url", url]);
  expect(r.code).toBe(1);
  const lines = r.err.trim().split("\n");
  expect(lines).toHaveLength(2);
  expect(JSON.parse(lines[0]!)).toEqual({
    time: expect.any(String),
    level: "warn",
    msg: "waiting for the database (up to 30 s)",
    database: "postgres://assay:***@127.0.0.1:1/assay",
    error: expect.any(String),
  });
  expect(lines[1]).toStartWith("assay serve: cannot reach postgres://assay:***@127.0.0.1:1/assay: ");
  expect(r.err).not.toContain("secret");
}, 90_000);

// On the PostgreSQL pass: the cluster answers, but the database or the role is not there.
test.skipIf(!onPostgres)(
  "an admin command on a PostgreSQL database or role that does not exist says which, not 'no answer'",
  async () => {
    const base = (await sharedPgCluster()).baseUrl;
    expect(await assay(["users", "list", "--database-url", `${base}assay_no_such_db`])).toEqual({
      code: 1,
      out: "",
      err: 'assay users: database "assay_no_such_db" does not exist\n',
    });
    const noRole = base.replace("postgres@", "assay_no_such_role@");
    expect(await assay(["tokens", "list", "root", "--database-url", `${noRole}postgres`])).toEqual({
      code: 1,
      out: "",
      err: 'assay tokens: role "assay_no_such_role" does not exist\n',
    });
  },
  90_000,
);

test.skipIf(!onPostgres)(
  "init on an initialised PostgreSQL database names the database, not a data directory",
  async () => {
    const { url, drop } = await freshPgDatabase();
    try {
      const init = ["init", "--org", "acme", "--admin", "root", "--database-url", url];
      expect((await assay(init)).code).toBe(0);
      expect(await assay(init)).toEqual({
        code: 1,
        out: "",
        err: `assay init: PostgreSQL ${url} is already initialised; use \`assay users\`, \`orgs\` and \`tokens\`.\n`,
      });
    } finally {
      await drop();
    }
  },
  90_000,
);

test("a password in the database URL's query is masked in the error too", async () => {
  const url = "postgres://alice@127.0.0.1:1/assay?user=bob&password=sekrit9";
  const r = await assay(["migrate", "--database-url", url]);
  expect(r.code).toBe(1);
  expect(r.err).toStartWith(
    "assay migrate: cannot reach postgres://alice@127.0.0.1:1/assay?user=bob&password=***: ",
  );
  expect(r.err).not.toContain("sekrit9");
}, 90_000);

test("the URL's connect_timeout is the connection's time limit (Assay's own 10 s always applied)", async () => {
  // A server that takes the connection and never answers its startup message.
  const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    const url = `postgres://alice@127.0.0.1:${silent.port}/assay?connect_timeout=1`;
    expect(await assay(["migrate", "--database-url", url])).toEqual({
      code: 1,
      out: "",
      err: `assay migrate: cannot reach ${url}: Connection timeout after 1s (sent startup message, but never received response)\n`,
    });
  } finally {
    silent.stop(true);
  }
}, 90_000);

test("a port in use is found before the data dir is touched: nothing created, nothing written", async () => {
  const holder = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    const args = (data: string) => [
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      String(holder.port),
      "--data-dir",
      data,
    ];
    const inUse = `port ${holder.port} on 127.0.0.1 is in use by another process; stop it or choose another --port`;
    const r = await assay(args(join(dir, "typo", "deeper", "data")));
    expect(r).toEqual({ code: 1, out: "", err: `assay serve: ${inUse}\n` });
    expect(existsSync(join(dir, "typo"))).toBe(false);
    const kept = join(dir, "kept");
    mkdirSync(kept);
    writeFileSync(join(kept, "notes.txt"), "mine");
    expect(await assay(args(kept))).toEqual({ code: 1, out: "", err: `assay serve: ${inUse}\n` });
    expect(readdirSync(kept)).toEqual(["notes.txt"]);
    // An address this machine does not have: the listen's own error, and nothing created either.
    const elsewhere = await assay([
      "serve",
      "--host",
      "192.0.2.1",
      "--port",
      "47999",
      "--data-dir",
      join(dir, "typo2", "d"),
    ]);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.err).toStartWith("assay serve: ");
    expect(existsSync(join(dir, "typo2"))).toBe(false);
  } finally {
    holder.stop(true);
  }
});

/**
 * The Bun Workers of this process (the validation workers, the intake's, the checkpoint thread…),
 * by thread name: the runtime starts and ends threads of its own lazily (HeapHelper, JSCWarmUp,
 * a signal or DNS thread), and counting every thread failed once in CI at 11 against 10 after a
 * start that had stopped all of its Workers.
 */
const threads = () =>
  readdirSync("/proc/self/task").filter((t) => {
    try {
      return readFileSync(`/proc/self/task/${t}/comm`, "utf8").trim() === "Worker";
    } catch {
      return false; // ended meanwhile
    }
  }).length;

test("a start that fails after its workers started stops them, and frees the data dir", async () => {
  // A damaged database: its schema history is whole, a table the executor's recovery reads is gone.
  const s = await startTestServer({ workers: 2 });
  // The measure sees this server's Workers (its two validation workers at least).
  expect(threads()).toBeGreaterThanOrEqual(2);
  const other = await otherConnection(s);
  await other.sql(onPostgres ? "DROP TABLE runs CASCADE" : "DROP TABLE run_findings");
  if (!onPostgres) await other.sql("DROP TABLE runs");
  await other.close();
  await s.stop();
  const config = testConfig({
    port: 0,
    log_level: "silent",
    workers: 2,
    data_dir: s.dataDir,
    database_url: s.databaseUrl,
  });
  // Settled: what the first server's stop ended is gone.
  const before = await settled();
  await expect(startServer(config)).rejects.toThrow(/runs/);
  // What it started is stopped (Workers end asynchronously: awaited, not slept).
  expect(await settled(before)).toBeLessThanOrEqual(before);
  if (!onPostgres) lockDataDir(s.dataDir).release();
  await s.close();
}, 30_000);

/** The thread count once it stops falling (or reaches `target`), polled for up to 10 s. */
async function settled(target = 0): Promise<number> {
  let last = threads();
  for (let i = 0; i < 200; i++) {
    await Bun.sleep(50);
    const now = threads();
    if (now <= target || (target === 0 && now === last && i >= 10)) return now;
    last = now;
  }
  return threads();
}

/**
 * Mounts a read-only tmpfs at a new temp dir (outside `dir`, whose afterAll walks every entry),
 * or returns null where this process may not mount (not root, or no CAP_SYS_ADMIN in the
 * container).
 */
function readOnlyMount(): { at: string; remove(): void } | null {
  if (process.getuid?.() !== 0) return null;
  const at = mkdtempSync(join(tmpdir(), "assay-ro-mount-"));
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", at], {
    stderr: "ignore",
  });
  const remove = () => {
    if (mounted.exitCode === 0) Bun.spawnSync(["umount", at]);
    rmSync(at, { recursive: true, force: true });
  };
  if (mounted.exitCode === 0) return { at, remove };
  remove();
  return null;
}
const canMount = (() => {
  const m = readOnlyMount();
  m?.remove();
  return m !== null;
})();

test.skipIf(!canMount)(
  "serve and init on a read-only file system: exit 1, the dir named, 'read-only file system' (not 'permission denied')",
  async () => {
    const mount = readOnlyMount()!;
    try {
      for (const [command, data] of [
        ["serve", mount.at],
        ["init", join(mount.at, "new")],
      ] as const) {
        const args =
          command === "serve"
            ? ["serve", "--port", "0", "--data-dir", data]
            : ["init", "--org", "acme", "--admin", "root", "--data-dir", data];
        expect(await assay(args)).toEqual({
          code: 1,
          out: "",
          err: `assay ${command}: cannot write the data directory ${data} (read-only file system)\n`,
        });
      }
    } finally {
      mount.remove();
    }
  },
);
