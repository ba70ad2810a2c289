// The CLI at its edges, as users run it (a real process on a temp data dir): output into a pipe
// read slowly, where a command's database is when flags and the environment disagree, files that
// look like an installation and are not, backups' permissions and names, and what a failed
// listen says.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "assay-cli-edges-"));
const data = join(dir, "data");
const main = join(import.meta.dir, "../src/main.ts");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// Each case runs the CLI a few times, a process each.
setDefaultTimeout(60_000);

/** The environment without anything that names a database or a server: each test sets its own. */
function cleanEnv(): Record<string, string | undefined> {
  const {
    ASSAY_DATA_DIR: _d,
    ASSAY_DATABASE_URL: _u,
    ASSAY_SERVER: _s,
    ASSAY_TOKEN: _t,
    ...env
  } = process.env;
  return env;
}

function assay(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync([process.execPath, main, ...args], {
    cwd: dir,
    env: { ...cleanEnv(), ...env },
    stdin: "ignore",
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

beforeAll(() => {
  expect(assay(["init", "--org", "acme", "--admin", "root", "--data-dir", data]).code).toBe(0);
  // 960 KB of export: a schema's description, far past a pipe's 64 KiB buffer.
  const wf = join(dir, "big.json");
  const description = "lorem ipsum ".repeat(80_000);
  writeFileSync(
    wf,
    JSON.stringify({
      slug: "big",
      name: "Big",
      allowed_file_types: ["JSON"],
      steps: [{ name: "schema", validator: "json_schema", config: { schema: { description } } }],
    }),
  );
  expect(assay(["workflows", "import", "acme", wf, "--data-dir", data]).code).toBe(0);
});

/** A failed listen's line with the system's own detail (between "PORT: " and " (is") as "…". */
const osDetail = (err: string) =>
  err.replace(/^(assay serve: cannot listen on [^ ]+:\d+: )[^\n]+( \(is --host)/, "$1…$2");

describe("output into a pipe", () => {
  test("a 960 KB export read only after a while arrives whole, then exit 0", async () => {
    const whole = assay(["workflows", "export", "acme", "big", "--data-dir", data]).out;
    expect(whole.length).toBeGreaterThan(900_000);
    const p = Bun.spawn([process.execPath, main, "workflows", "export", "acme", "big", "--data-dir", data], {
      env: cleanEnv(),
      stdout: "pipe",
      stderr: "pipe",
    });
    // Nothing is read until the command has exited or has waited a second for its reader: it
    // must not exit with output still buffered (it did, at 64 KiB, exit 0). However long the
    // wait, a correct command's output is complete.
    await Promise.race([p.exited, Bun.sleep(1000)]);
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    expect({ code, length: out.length }).toEqual({ code: 0, length: whole.length });
    expect(out).toBe(whole);
  });
});

describe("where the database is", () => {
  test("an explicit --data-dir with ASSAY_DATABASE_URL set is exit 2, as with --database-url; empty is unset", () => {
    const env = { ASSAY_DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" };
    expect(assay(["orgs", "list", "--data-dir", data], env)).toEqual({
      code: 2,
      out: "",
      err: "assay orgs: Invalid configuration:\n  --data-dir names a data dir but ASSAY_DATABASE_URL names a PostgreSQL database: unset one of them\n",
    });
    const r = assay(["orgs", "list", "--data-dir", data], { ASSAY_DATABASE_URL: "" });
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
    expect(r.out).toMatch(/^SLUG\s+NAME/);
    expect(r.out).toContain("acme");
    const both = assay(["orgs", "list", "--data-dir", data, "--database-url", env.ASSAY_DATABASE_URL]);
    expect(both).toEqual({
      code: 2,
      out: "",
      err: "assay orgs: Invalid configuration:\n  --data-dir and --database-url name two databases: give one of them\n",
    });
    // backup too (it answered exit 1 with its PostgreSQL advice); nothing is written.
    const copy = join(dir, "both-backup.db");
    expect(assay(["backup", copy, "--data-dir", data, "--database-url", env.ASSAY_DATABASE_URL])).toEqual({
      code: 2,
      out: "",
      err: "assay backup: Invalid configuration:\n  --data-dir and --database-url name two databases: give one of them\n",
    });
    expect(existsSync(copy)).toBe(false);
  });

  test("serve takes the same flags the same way: both at once is exit 2, nothing created", () => {
    const x = join(dir, "serve-both");
    const r = assay([
      "serve",
      "--port",
      "0",
      "--data-dir",
      x,
      "--database-url",
      "postgres://n@127.0.0.1:1/n",
    ]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: "assay serve: Invalid configuration:\n  --data-dir and --database-url name two databases: give one of them\n",
    });
    expect(existsSync(x)).toBe(false);
  });

  test("serve with a default step time limit above the ceiling: exit 2, naming both, nothing created", () => {
    const x = join(dir, "serve-step-timeout");
    expect(assay(["serve", "--port", "0", "--data-dir", x, "--step-timeout-ms", "700000"])).toEqual({
      code: 2,
      out: "",
      err: "assay serve: Invalid configuration:\n  --step-timeout-ms: 700000 is above the ceiling for a step's time limit, ASSAY_STEP_TIMEOUT_MAX_MS 600000\n",
    });
    expect(
      assay(["serve", "--port", "0", "--data-dir", x, "--step-timeout-max-ms", "1000"], {
        ASSAY_STEP_TIMEOUT_MS: "5000",
      }),
    ).toEqual({
      code: 2,
      out: "",
      err: "assay serve: Invalid configuration:\n  ASSAY_STEP_TIMEOUT_MS: 5000 is above the ceiling for a step's time limit, --step-timeout-max-ms 1000\n",
    });
    expect(existsSync(x)).toBe(false);
  });

  test("a URL as the data dir is exit 2, its password not shown, nothing created", () => {
    for (const [args, env, where] of [
      [["serve", "--port", "0", "--data-dir", "postgres://u:pw@127.0.0.1:1/n"], {}, "--data-dir"],
      [["users", "list"], { ASSAY_DATA_DIR: "postgres://u:pw@127.0.0.1:1/n" }, "ASSAY_DATA_DIR"],
    ] as const) {
      expect(assay([...args], env)).toEqual({
        code: 2,
        out: "",
        err: `assay ${args[0]}: Invalid configuration:\n  ${where}: "postgres://u:***@127.0.0.1:1/n" is a URL, not a directory (a PostgreSQL database is given with --database-url or ASSAY_DATABASE_URL)\n`,
      });
    }
    expect(existsSync(join(dir, "postgres:"))).toBe(false);
  });

  test("an sslmode PostgreSQL's client does not know is exit 2 at start, naming the setting, for serve and every command", () => {
    const url = "postgres://u:pw@127.0.0.1:1/n?sslmode=required";
    for (const [args, env, where] of [
      [["serve", "--port", "0", "--database-url", url], {}, "--database-url"],
      [["migrate"], { ASSAY_DATABASE_URL: url }, "ASSAY_DATABASE_URL"],
    ] as const) {
      expect(assay([...args], env)).toEqual({
        code: 2,
        out: "",
        err: `assay ${args[0]}: Invalid configuration:\n  ${where}: sslmode "required" is not one of disable, allow, prefer, require, verify-ca, verify-full\n`,
      });
    }
  });

  test('an empty option (`--data-dir "$UNSET"`) is exit 2, not the default, for serve and the commands; nothing created', () => {
    const at = join(dir, "empty-options");
    mkdirSync(at);
    const run = (args: string[]) => {
      const p = Bun.spawnSync([process.execPath, main, ...args], {
        cwd: at,
        env: { ...cleanEnv(), ASSAY_DATA_DIR: join(dir, "elsewhere") },
        stdin: "ignore",
      });
      return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
    };
    for (const [args, said] of [
      [["serve", "--port", "0", "--data-dir", ""], "--data-dir needs a value, not an empty one"],
      [
        ["init", "--org", "acme", "--admin", "root", "--data-dir", ""],
        "--data-dir needs a value, not an empty one",
      ],
      [["users", "list", "--database-url="], "--database-url needs a value, not an empty one"],
      [["workflows", "export", "acme", "orders", "--server", ""], "--server needs a value, not an empty one"],
      [
        ["validate", "a.json", "--org", "acme", "--workflow", "w", "--server", "http://x", "--token="],
        "--token needs a value, not an empty one",
      ],
    ] as const) {
      const command = args[0];
      expect(run([...args])).toEqual({
        code: 2,
        out: "",
        err: `assay ${command}: ${said}\nRun "assay ${command} -h" for help.\n`,
      });
    }
    expect(run(["serve", "--port", "", "--host="])).toEqual({
      code: 2,
      out: "",
      err: "assay serve: Invalid configuration:\n  --host: no value given (leave the option out for its default)\n  --port: no value given (leave the option out for its default)\n",
    });
    expect(readdirSync(at)).toEqual([]);
    expect(existsSync(join(dir, "elsewhere"))).toBe(false);
  });

  test("query parameters Bun's PostgreSQL client cannot use are exit 2 at start, each named, for serve and every command", () => {
    // Before: serve waited 30 s for the unreachable host, then said only "cannot reach" (and
    // connect_timeout=abc, max=50 and target_session_attrs were never applied, on any host).
    const query =
      "connect_timeout=abc&max_lifetime=1.5&port=0&prepare=maybe&channel_binding=always&SSL_MODE=on&max=50&target_session_attrs=standby&sslnegotiation=direct&keepalives=1&target_session_attrs=any&application_name=assay&options=-c%20search_path%3Dassay";
    const url = `postgres://u:pw@127.0.0.1:1/n?${query}`;
    for (const [args, env, where] of [
      [["serve", "--port", "0", "--database-url", url], {}, "--database-url"],
      [["migrate"], { ASSAY_DATABASE_URL: url }, "ASSAY_DATABASE_URL"],
    ] as const) {
      const problems = [
        'connect_timeout "abc" is not a whole number of seconds (0 to 2147483647)',
        'max_lifetime "1.5" is not a whole number of seconds (0 to 2147483647)',
        'port "0" is not a port (1 to 65535)',
        'prepare "maybe" is not one of true, false, 1, 0',
        'channel_binding "always" is not one of disable, prefer, require',
        'SSL_MODE "on" is not one of disable, allow, prefer, require, verify-ca, verify-full',
        "max cannot be set in the URL: the pool's size is ASSAY_DATABASE_POOL_SIZE (--database-pool-size)",
        "target_session_attrs is a libpq option that Bun's PostgreSQL client, which Assay uses, does not implement: remove it from the URL (docs/postgres.md)",
        "sslnegotiation is a libpq option that Bun's PostgreSQL client, which Assay uses, does not implement: remove it from the URL (docs/postgres.md)",
      ];
      expect(assay([...args], env)).toEqual({
        code: 2,
        out: "",
        err: `assay ${args[0]}: Invalid configuration:\n${problems.map((p) => `  ${where}: ${p}\n`).join("")}`,
      });
    }
  });

  test("sslrootcert=system with an sslmode that does not check the host name is exit 2 at start (libpq refuses it; Bun's client connected verify-full or verify-ca)", () => {
    // Before: sslmode=disable&sslrootcert=system asked Bun's client for verify-full, and against a
    // server without TLS the start said "does not offer TLS, which sslmode=disable requires".
    const contradicts = (mode: string) =>
      `sslrootcert=system checks the server's certificate against the system's CAs and its host name (sslmode=verify-full, as libpq reads it), which ${mode} does not: leave sslmode out or set it to verify-full (docs/postgres.md)`;
    for (const [query, mode] of [
      ["sslmode=disable&sslrootcert=system", "sslmode=disable"],
      ["sslrootcert=system&sslmode=verify-ca", "sslmode=verify-ca"],
      ["ssl=false&sslrootcert=system", "ssl=false"],
    ] as const)
      expect(assay(["migrate"], { ASSAY_DATABASE_URL: `postgres://u:pw@127.0.0.1:1/n?${query}` })).toEqual({
        code: 2,
        out: "",
        err: `assay migrate: Invalid configuration:\n  ASSAY_DATABASE_URL: ${contradicts(mode)}\n`,
      });
  });

  test("a URL naming several hosts (libpq's failover list) is exit 2 at start, naming the setting, for serve, migrate and an admin command", () => {
    // Bun's client reads "h1,h2" as one host name and reaches neither: migrate said "cannot reach
    // …: Failed to connect", serve waited 30 s first, and `h1:5432,h2:5432` was "not a valid URL".
    const why =
      "Bun's PostgreSQL client, which Assay uses, connects to one host: it does not try the hosts in turn as libpq does, but reads the list as a single host name and reaches none of them. Name one host (for failover, one address that follows the primary: a virtual IP, a DNS name or a proxy) (docs/postgres.md)";
    for (const [args, env, where, listed] of [
      [
        ["serve", "--port", "0", "--database-url", "postgres://u:pw@127.0.0.1,127.0.0.2:1/n"],
        {},
        "--database-url",
        "the URL names several hosts (127.0.0.1,127.0.0.2:1)",
      ],
      [
        ["migrate"],
        { ASSAY_DATABASE_URL: "postgres://u:pw@127.0.0.1:1,127.0.0.2:1/n?sslmode=disable" },
        "ASSAY_DATABASE_URL",
        "the URL names several hosts (127.0.0.1:1,127.0.0.2:1)",
      ],
      [
        ["users", "list"],
        { ASSAY_DATABASE_URL: "postgres://u:pw@/n?host=127.0.0.1,127.0.0.2&port=1" },
        "ASSAY_DATABASE_URL",
        "host=127.0.0.1,127.0.0.2 names several hosts",
      ],
    ] as const)
      expect(assay([...args], env)).toEqual({
        code: 2,
        out: "",
        err: `assay ${args[0]}: Invalid configuration:\n  ${where}: ${listed}: ${why}\n`,
      });
  });

  test("a URL naming no host is accepted (Bun's client connects to localhost over TCP, which served before); unreachable, the error says so", () => {
    // fe532ca refused it at start, exit 2: a deployment whose PostgreSQL listens on localhost, as
    // Debian's does, stopped at the upgrade. Here nothing listens on port 1.
    for (const [url, shown] of [
      ["postgres://u:pw@/db?port=1", "postgres://u:***@/db?port=1"],
      ["postgresql:///db?port=1&host=", "postgresql:///db?port=1&host="],
    ]) {
      // The client's own detail (refused over IPv4 or IPv6, as localhost resolves) is the machine's.
      const hint =
        "; the URL names no host, so Bun's PostgreSQL client tried localhost over TCP (libpq would use its Unix socket): name the host, or the socket's directory (postgres://user:password@/assay?host=/run/postgresql)\n";
      const quoted = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      expect([url, assay(["migrate"], { ASSAY_DATABASE_URL: url!, PGHOST: "" })]).toEqual([
        url,
        {
          code: 1,
          out: "",
          err: expect.stringMatching(
            new RegExp(`^assay migrate: cannot reach ${quoted(shown!)}: [^\\n;]+${quoted(hint)}$`),
          ),
        },
      ]);
    }
  });

  test("serve with --data-dir while ASSAY_DATABASE_URL is set: exit 2, nothing created", () => {
    const x = join(dir, "serve-env");
    const r = assay(["serve", "--port", "0", "--data-dir", x], {
      ASSAY_DATABASE_URL: "postgres://n@127.0.0.1:1/n",
    });
    expect(r).toEqual({
      code: 2,
      out: "",
      err: "assay serve: Invalid configuration:\n  --data-dir names a data dir but ASSAY_DATABASE_URL names a PostgreSQL database: unset one of them\n",
    });
    expect(existsSync(x)).toBe(false);
  });

  test("a destructive command's message names the database it changed", () => {
    expect(assay(["orgs", "create", "gone", "--data-dir", data]).code).toBe(0);
    expect(assay(["orgs", "suspend", "gone", "--data-dir", data])).toEqual({
      code: 0,
      out: `Organization gone: suspended (SQLite in ${data}).\n`,
      err: "",
    });
  });

  test("ASSAY_SERVER in the environment: an explicit --data-dir is the data dir; import is local", () => {
    const env = { ASSAY_SERVER: "http://127.0.0.1:1", ASSAY_TOKEN: "assay_x" };
    const exp = assay(["workflows", "export", "acme", "big", "--data-dir", data], env);
    expect({ code: exp.code, err: exp.err }).toEqual({ code: 0, err: "" });
    expect(exp.out).toContain("slug: big");
    const file = join(dir, "small.yaml");
    writeFileSync(
      file,
      "slug: small\nname: Small\nallowed_file_types: [JSON]\nsteps:\n  - name: s\n    validator: syntax\n",
    );
    const onlyServer = { ASSAY_SERVER: "http://127.0.0.1:1" };
    expect(assay(["workflows", "import", "acme", file, "--data-dir", data], onlyServer)).toEqual({
      code: 0,
      out: `Created workflow small (version 1) in acme (SQLite in ${data}).\n`,
      err: "",
    });
    const both = assay(
      ["workflows", "export", "acme", "big", "--data-dir", data, "--server", "http://h"],
      env,
    );
    expect(both).toEqual({
      code: 2,
      out: "",
      err: 'assay workflows: --server and --data-dir (or --database-url) name two places: give one\nRun "assay workflows -h" for help.\n',
    });
  });

  test("user:password in --server is refused (it could not be sent) and never printed", () => {
    const r = assay([
      "workflows",
      "export",
      "acme",
      "big",
      "--server",
      "http://u:p4ssw0rd@127.0.0.1:1",
      "--token",
      "t",
    ]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: 'assay workflows: --server http://127.0.0.1:1 carries a user:password, which cannot be sent: the Authorization header carries the token. Remove it from the URL.\nRun "assay workflows -h" for help.\n',
    });
  });
});

describe("what is an installation", () => {
  const refused = (d: string, command: string) =>
    `assay ${command}: No Assay installation in SQLite in ${d}: name one with --data-dir or --database-url (or ASSAY_DATA_DIR, ASSAY_DATABASE_URL), or create one with "assay init".\n`;

  test("an empty assay.db, or another program's SQLite file, is refused and left unchanged", () => {
    const empty = join(dir, "empty");
    mkdirSync(empty);
    writeFileSync(join(empty, "assay.db"), "");
    const foreign = join(dir, "foreign");
    mkdirSync(foreign);
    const f = new Database(join(foreign, "assay.db"));
    f.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); PRAGMA user_version = 3");
    f.close();
    const before = statSync(join(foreign, "assay.db")).size;
    for (const d of [empty, foreign])
      for (const args of [
        ["audit", "verify"],
        ["users", "list"],
        ["backup", join(dir, `b-${d.length}.db`)],
      ]) {
        const r = assay([...args, "--data-dir", d]);
        expect({ args, ...r }).toEqual({ args, code: 1, out: "", err: refused(d, args[0]!) });
      }
    expect(statSync(join(empty, "assay.db")).size).toBe(0);
    expect(statSync(join(foreign, "assay.db")).size).toBe(before);
    const tables = new Database(join(foreign, "assay.db"), { readonly: true });
    expect(tables.query("SELECT name FROM sqlite_schema WHERE type = 'table'").all()).toEqual([
      { name: "notes" },
    ]);
    tables.close();
  });

  test("serve, init and migrate refuse another program's SQLite file, whatever its user_version, naming it, and leave it unchanged", () => {
    for (const version of [0, 3, 50]) {
      const d = join(dir, `foreign-${version}`);
      mkdirSync(d);
      const file = join(d, "assay.db");
      const f = new Database(file);
      f.exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); PRAGMA user_version = ${version}`);
      f.close();
      const before = readFileSync(file);
      for (const args of [
        ["serve", "--port", "0"],
        ["init", "--org", "acme", "--admin", "root"],
        ["migrate"],
      ]) {
        const r = assay([...args, "--data-dir", d]);
        expect({ version, args, ...r }).toEqual({
          version,
          args,
          code: 1,
          out: "",
          err: `assay ${args[0]}: ${file} is not an Assay database: it is another application's SQLite database (tables: notes); restore an Assay backup or choose another --data-dir\n`,
        });
      }
      expect(readFileSync(file).equals(before)).toBe(true);
      expect(existsSync(join(d, "assay.db-wal"))).toBe(false);
    }
  });
});

describe("a data dir that cannot be written", () => {
  test("serve on a disk that fills up (a file size limit) names the data dir and the cause, exit 1", () => {
    const d = join(dir, "too-small");
    // RLIMIT_FSIZE (40 KiB) with SIGXFSZ ignored: the first migration's WAL does not fit (EFBIG).
    const p = Bun.spawnSync(
      [
        "sh",
        "-c",
        'trap "" XFSZ; ulimit -f 40; exec "$0" "$@"',
        process.execPath,
        main,
        "serve",
        "--port",
        "0",
        "--data-dir",
        d,
      ],
      { cwd: dir, env: cleanEnv(), stdin: "ignore" },
    );
    expect({ code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() }).toEqual({
      code: 1,
      out: "",
      err: `assay serve: cannot write the data directory ${d}: the disk reported an I/O error (full, a file size limit, or failing)\n`,
    });
  });
});

describe("beside a server that writes (another process holding the write lock)", () => {
  test("a command that reads, then writes, waits for the lock instead of failing at once", async () => {
    // A change reads first (the org, as it checks it), then writes. In a deferred
    // transaction the write met the other process's lock without waiting: exit 1, "the database
    // is locked by another process", under a server doing nothing more than a loop of PATCHes.
    const holder = new Database(join(data, "assay.db"));
    holder.exec("PRAGMA busy_timeout = 5000");
    holder.exec("BEGIN IMMEDIATE");
    let held = true;
    try {
      const p = Bun.spawn([process.execPath, main, "orgs", "suspend", "acme", "--data-dir", data], {
        cwd: dir,
        env: cleanEnv(),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      // Let go once the command is done or after 2 s, well within its 5 s busy timeout.
      await Promise.race([p.exited, Bun.sleep(2000)]);
      holder.exec("ROLLBACK");
      held = false;
      const [out, err, code] = await Promise.all([
        new Response(p.stdout).text(),
        new Response(p.stderr).text(),
        p.exited,
      ]);
      expect({ code, out, err }).toEqual({
        code: 0,
        out: `Organization acme: suspended (SQLite in ${data}).\n`,
        err: "",
      });
    } finally {
      if (held) holder.exec("ROLLBACK");
      holder.close();
    }
    expect(assay(["orgs", "list", "--data-dir", data]).out).toMatch(/acme\s+acme\s+suspended/);
    expect(assay(["orgs", "restore", "acme", "--data-dir", data]).code).toBe(0);
  });
});

describe("a server beside another process that writes (the CLI, a script)", () => {
  test("a request whose transaction reads, then writes, waits for the other's lock: 200, not 503", async () => {
    // A workflow PATCH reads the workflow, then writes it and the audit log. Its deferred
    // transaction met the other process's lock at its first write and failed at once: 5 of 400
    // PATCHes were 503 while `assay orgs suspend|restore` ran 50 times beside them.
    const d = join(dir, "server-beside");
    const init = assay(["init", "--org", "acme", "--admin", "root", "--data-dir", d]);
    expect(init.code).toBe(0);
    const token = init.out.trim().split("\n").at(-1)!;
    const server = Bun.spawn(
      [process.execPath, main, "serve", "--port", "0", "--data-dir", d, "--log-level", "error"],
      {
        cwd: dir,
        env: cleanEnv(),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "ignore",
      },
    );
    try {
      const reader = server.stdout.getReader();
      let banner = "";
      while (!/listening on (\S+)/.test(banner)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`serve exited: ${banner}`);
        banner += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      const url = /listening on (\S+)/.exec(banner)![1]!;
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${url}/api/v1/orgs/acme/${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const created = await call("POST", "workflows/", {
        slug: "w",
        name: "W",
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "syntax", config: {} }],
      });
      expect(created.status).toBe(201);
      const holder = new Database(join(d, "assay.db"));
      holder.exec("PRAGMA busy_timeout = 5000");
      holder.exec("BEGIN IMMEDIATE");
      let held = true;
      try {
        const patched = call("PATCH", "workflows/w/", { description: "changed" });
        // Let go once answered or after 2 s, well within the server's 5 s busy timeout.
        await Promise.race([patched, Bun.sleep(2000)]);
        holder.exec("ROLLBACK");
        held = false;
        const r = await patched;
        expect({
          status: r.status,
          description: ((await r.json()) as { description?: string }).description,
        }).toEqual({
          status: 200,
          description: "changed",
        });
      } finally {
        if (held) holder.exec("ROLLBACK");
        holder.close();
      }
    } finally {
      server.kill("SIGTERM");
      await server.exited;
    }
  });
});

describe("assay backup", () => {
  test("a backup that does not fit (a file size limit) says so, names the file, leaves nothing", () => {
    const file = join(dir, "backup-too-big.db");
    // RLIMIT_FSIZE (256 KiB) with SIGXFSZ ignored: the WAL index fits, the ~1 MB copy does not; its
    // write fails (EFBIG) as on a full disk, and the process lives.
    const p = Bun.spawnSync(
      [
        "sh",
        "-c",
        'trap "" XFSZ; ulimit -f 256; exec "$0" "$@"',
        process.execPath,
        main,
        "backup",
        file,
        "--data-dir",
        data,
      ],
      { cwd: dir, env: cleanEnv(), stdin: "ignore" },
    );
    expect({ code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() }).toEqual({
      code: 1,
      out: "",
      err: `assay backup: Cannot write the backup to ${file}: the disk reported an I/O error (full, or a file size limit); nothing was left behind.\n`,
    });
    expect(existsSync(file)).toBe(false);
  });

  test("the copy is readable by its owner only (it holds hashes and secrets)", () => {
    const file = join(dir, "backup-mode.db");
    const r = assay(["backup", file, "--data-dir", data]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(r).toEqual({ code: 0, out: `Backup of SQLite in ${data} written to ${file}.\n`, err: "" });
    const copy = new Database(file, { readonly: true });
    expect(copy.query("SELECT slug FROM orgs WHERE slug = 'acme'").get()).toEqual({ slug: "acme" });
    copy.close();
  });

  test("`:memory:` is a file name like any other: written, and named by its path", () => {
    const r = assay(["backup", ":memory:", "--data-dir", data]);
    const file = join(dir, ":memory:");
    expect(r).toEqual({ code: 0, out: `Backup of SQLite in ${data} written to ${file}.\n`, err: "" });
    expect(statSync(file).size).toBeGreaterThan(0);
    expect(assay(["backup", ":memory:", "--data-dir", data])).toEqual({
      code: 1,
      out: "",
      err: `assay backup: ${file} exists; choose a new file name.\n`,
    });
  });

  test("a file in a directory that does not exist: said in the command's words, nothing written", () => {
    const file = join(dir, "no-such-dir", "b.db");
    expect(assay(["backup", file, "--data-dir", data])).toEqual({
      code: 1,
      out: "",
      err: `assay backup: Cannot write the backup to ${file}: the directory ${join(dir, "no-such-dir")} does not exist.\n`,
    });
  });
});

describe("help and start errors", () => {
  test("version -h is the help, like every command's; version with an argument is exit 2", () => {
    expect(assay(["version", "-h"])).toEqual({
      code: 0,
      out: "Usage:\n  assay version\n\nOptions:\n  -h, --help  show this help\n",
      err: "",
    });
    expect(assay(["version", "extra"])).toEqual({
      code: 2,
      out: "",
      err: 'assay version: unexpected argument "extra"\nRun "assay version -h" for help.\n',
    });
  });

  test("the light client without arguments: the help on stderr, exit 2, as `assay` alone", () => {
    const p = Bun.spawnSync([process.execPath, join(import.meta.dir, "../src/cli/light.ts")], {
      env: cleanEnv(),
      stdin: "ignore",
    });
    expect([p.exitCode, p.stdout.toString()]).toEqual([2, ""]);
    expect(p.stderr.toString()).toStartWith("Usage:\n  assay-validate FILE…");
  });

  test("a host that does not resolve, port 0: said with the address, and no data dir created", () => {
    const x = join(dir, "x2");
    const r = assay(["serve", "--host", "nohost.invalid", "--port", "0", "--data-dir", x]);
    // The resolver's own words vary with the machine's (EINVAL here, EAI_AGAIN without DNS): the
    // line around them is Assay's.
    expect({ ...r, err: osDetail(r.err) }).toEqual({
      code: 1,
      out: "",
      err: "assay serve: cannot listen on nohost.invalid:0: … (is --host a name or address of this machine?)\n",
    });
    expect(existsSync(x)).toBe(false);
  });

  test("a host name the resolver refuses (getaddrinfo): said with the address and the setting, as any other", () => {
    const x = join(dir, "x3");
    const r = assay(["serve", "--host", "not..a..host", "--port", "0", "--data-dir", x]);
    expect({ ...r, err: osDetail(r.err) }).toEqual({
      code: 1,
      out: "",
      err: "assay serve: cannot listen on not..a..host:0: … (is --host a name or address of this machine?)\n",
    });
    expect(existsSync(x)).toBe(false);
  });

  test("an error whose detail only repeats it is one line: members add of a member", () => {
    expect(assay(["members", "add", "acme", "root", "viewer", "--data-dir", data])).toEqual({
      code: 1,
      out: "",
      err: "assay members: The user is already a member of this organization.\n",
    });
  });

  test("a negative number as an argument is that argument, judged by the command, not an option", () => {
    expect(assay(["settings", "set", "token_max_ttl_days", "-5", "--data-dir", data])).toEqual({
      code: 2,
      out: "",
      err: 'assay settings: VALUE must be a number of days (1..36500) or null\nRun "assay settings -h" for help.\n',
    });
    expect(assay(["users", "delete", "-1", "--data-dir", data])).toEqual({
      code: 1,
      out: "",
      err: 'assay users: There is no user "-1".\n',
    });
  });
});
