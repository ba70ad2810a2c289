// The CLI as users run it: a real process on a temp data dir.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Each test runs up to ~30 `assay` processes one after another (24–26 s for the longest under a
// CPU hog on 2 cores): the run's 60 s default would fail a machine 2.5× slower for its speed, not
// for what the test checks. An upper bound on waiting, not a measure.
setDefaultTimeout(300_000);

const dir = mkdtempSync(join(tmpdir(), "assay-cli-"));
const dataDir = join(dir, "data");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function assay(args: string[], stdin?: string | Uint8Array) {
  const p = Bun.spawnSync([process.execPath, join(import.meta.dir, "../src/main.ts"), ...args], {
    env: { ...process.env, ASSAY_DATA_DIR: dataDir },
    stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}
const lastLine = (s: string) => s.trim().split("\n").at(-1)!;

describe("assay CLI", () => {
  test("version and --help exit 0; no command exits 2", () => {
    expect(assay(["version"]).out).toMatch(/^assay \d+\.\d+\.\d+/);
    for (const c of [
      "serve",
      "init",
      "users",
      "orgs",
      "members",
      "tokens",
      "backup",
      "workflows",
      "settings",
    ]) {
      const r = assay([c, "--help"]);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`assay ${c}`);
    }
    expect(assay([]).code).toBe(2);
  });
  test("exit 2 with a clear message for an unknown command or option", () => {
    const r = assay(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown command "frobnicate"');
    const o = assay(["init", "--org", "acme", "--admin", "root", "--colour", "red"]);
    expect(o.code).toBe(2);
    expect(o.err).toContain("unknown option --colour");
    expect(assay(["tokens", "create"]).code).toBe(2);
  });
  test("a mistyped command, subcommand, option, role or KEY: exit 2, naming what it most likely meant", () => {
    const typo = join(dir, "no-installation-here");
    for (const [args, says] of [
      [["user", "list"], 'assay: unknown command "user" (did you mean "users"?)'],
      [["frobnicate"], 'assay: unknown command "frobnicate"\n'],
      [
        ["users", "lst"],
        'assay users: unknown subcommand "lst" (did you mean "list"?)\nusage: assay users create|',
      ],
      [["orgs", "suspnd", "acme"], 'unknown subcommand "suspnd" (did you mean "suspend"?)'],
      [["members", "ad", "acme", "bob", "viewer"], 'unknown subcommand "ad" (did you mean "add"?)'],
      [["tokens", "revok", "1"], 'unknown subcommand "revok" (did you mean "revoke"?)'],
      [["settings", "gte"], 'unknown subcommand "gte" (did you mean "get"?)'],
      [["audit", "verfy"], 'unknown subcommand "verfy" (did you mean "verify"?)'],
      [["workflows", "exprot", "acme", "wf"], 'unknown subcommand "exprot" (did you mean "export"?)'],
      [["db", "cpy"], 'unknown subcommand "cpy" (did you mean "copy"?)'],
      [
        ["users", "create", "bob", "--nmae", "Bob"],
        "assay users: unknown option --nmae (did you mean --name?)\n",
      ],
      [
        ["tokens", "create", "bob", "--name", "x", "--expire-in", "3d"],
        "unknown option --expire-in (did you mean --expires-in?)",
      ],
      [["users", "list", "--data-dri", "x"], "unknown option --data-dri (did you mean --data-dir?)"],
      // Known to the command, not to this subcommand: the subcommand's own options are guessed from.
      [["users", "list", "--name", "x"], "assay users: unknown option --name\n"],
      [
        ["members", "add", "acme", "bob", "auther"],
        'ROLE is one of viewer, executor, author, admin, not "auther" (did you mean "author"?)',
      ],
      [
        ["settings", "set", "token_max_ttl", "5"],
        '"token_max_ttl" is no KEY (did you mean "token_max_ttl_days"?)',
      ],
    ] as const) {
      // `db` takes --from and --to, not --data-dir.
      const r = assay([...args, ...(args[0] === "db" ? [] : ["--data-dir", typo])]);
      expect({ args, code: r.code, out: r.out, says: r.err.includes(says) }).toEqual({
        args,
        code: 2,
        out: "",
        says: true,
      });
    }
    expect(existsSync(typo)).toBe(false);
  });
  test("help COMMAND is that command's help, as COMMAND -h; an unknown one is exit 2 with a guess", () => {
    for (const c of ["users", "tokens", "audit"]) {
      const r = assay(["help", c]);
      expect(r).toEqual({ code: 0, out: assay([c, "-h"]).out, err: "" });
      expect(r.out).toContain(`assay ${c} `);
    }
    expect(assay(["help", "users", "create"]).out).toBe(assay(["users", "-h"]).out);
    const helpHelp = assay(["help", "help"]);
    expect([helpHelp.code, helpHelp.out, helpHelp.err]).toEqual([0, assay(["help"]).out, ""]);
    const typo = assay(["help", "tokns"]);
    expect(typo).toEqual({
      code: 2,
      out: "",
      err: 'assay help: unknown command "tokns" (did you mean "tokens"?)\nRun "assay help" for the commands.\n',
    });
  });
  test("init prints a working token alone on the last line, then refuses to run again", async () => {
    const r = assay(
      ["init", "--org", "acme", "--admin", "root", "--password-stdin"],
      "correct horse battery\n",
    );
    expect(r.code).toBe(0);
    const token = lastLine(r.out);
    expect(token).toMatch(/^assay_[A-Za-z0-9_-]{51}$/);
    const again = assay(["init", "--org", "acme", "--admin", "root"]);
    expect(again.code).toBe(1);
    expect(again.err).toBe(
      `assay init: SQLite in ${dataDir} is already initialised; use \`assay users\`, \`orgs\` and \`tokens\`.\n`,
    );
  });
  test("users, orgs, members, tokens round trip", () => {
    expect(assay(["users", "create", "bob", "--name", "Bob"]).code).toBe(0);
    expect(assay(["users", "create", "bob"]).code).toBe(1);
    expect(assay(["users", "list"]).out).toContain("bob");
    expect(assay(["orgs", "create", "beta", "--name", "Beta Ltd"]).code).toBe(0);
    expect(assay(["members", "add", "beta", "bob", "executor"]).code).toBe(0);
    // A malformed argument is exit 2 (bad arguments), before anything is written.
    expect(assay(["members", "add", "beta", "bob", "king"])).toEqual({
      code: 2,
      out: "",
      err: 'assay members: ROLE is one of viewer, executor, author, admin, not "king"\nRun "assay members -h" for help.\n',
    });
    expect(assay(["members", "list", "beta"]).out).toMatch(/bob\s+executor/);
    // An existing member's role: `add` refuses a second membership, `set-role` changes it.
    expect(assay(["users", "create", "carol"]).code).toBe(0);
    expect(assay(["members", "add", "beta", "carol", "viewer"]).code).toBe(0);
    expect(assay(["members", "add", "beta", "carol", "author"]).code).toBe(1);
    expect(assay(["members", "set-role", "beta", "carol", "author"])).toEqual({
      code: 0,
      out: `carol is now author of beta (SQLite in ${dataDir}).\n`,
      err: "",
    });
    expect(assay(["members", "list", "beta"]).out).toMatch(/carol\s+author/);
    expect(assay(["members", "set-role", "beta", "nobody", "admin"]).code).toBe(1);
    expect(assay(["members", "set-role", "beta", "carol", "king"]).code).toBe(2);
    for (const [bad, why] of [
      ["banana", '"banana" is not a duration like 30d, 2w or 12h'],
      ["0", "the duration must be positive"],
    ])
      expect(assay(["tokens", "create", "bob", "--name", "ci", "--expires-in", bad!])).toEqual({
        code: 2,
        out: "",
        err: `assay tokens: ${why}\nRun "assay tokens -h" for help.\n`,
      });
    expect(assay(["tokens", "list", "bob"]).out).not.toContain("ci");
    expect(assay(["workflows", "import", "beta", join(dataDir, "missing.yaml")])).toEqual({
      code: 2,
      out: "",
      err: `assay workflows: cannot read ${join(dataDir, "missing.yaml")}: no such file\nRun "assay workflows -h" for help.\n`,
    });
    const t = assay(["tokens", "create", "bob", "--name", "ci", "--expires-in", "30d"]);
    expect(t.code).toBe(0);
    expect(lastLine(t.out)).toMatch(/^assay_/);
    expect(assay(["tokens", "list", "bob"]).out).toContain("ci");
    const id = /Token (\d+)/.exec(t.out)![1]!;
    expect(assay(["tokens", "revoke", id]).code).toBe(0);
    expect(assay(["tokens", "revoke", "999999"]).code).toBe(1);
    expect(assay(["orgs", "suspend", "beta"]).code).toBe(0);
    expect(assay(["orgs", "list"]).out).toMatch(/beta\s+Beta Ltd\s+suspended/);
    expect(assay(["members", "remove", "beta", "bob"]).code).toBe(0);
    expect(assay(["users", "delete", "bob"]).code).toBe(0);
  });
  test("workflows import and export round trip (YAML)", () => {
    const file = join(dir, "wf.yaml");
    writeFileSync(
      file,
      "kind: assay/workflow\nversion: 1\nslug: invoices\nname: Invoices\nallowed_file_types: [JSON]\nsteps:\n  - name: well-formed\n    validator: syntax\n    config: {}\n",
    );
    const imp = assay(["workflows", "import", "acme", file]);
    expect(imp.code).toBe(0);
    expect(imp.out).toContain("Created workflow invoices");
    const exp = assay(["workflows", "export", "acme", "invoices"]);
    expect(exp.code).toBe(0);
    expect(exp.out).toContain("slug: invoices");
    expect(exp.out).toContain("validator: syntax");
    writeFileSync(file, exp.out.replace("name: Invoices", "name: Invoices v2"));
    expect(assay(["workflows", "import", "acme", file]).out).toContain(
      "Replaced workflow invoices (version 2)",
    );
    writeFileSync(file, "slug: broken\nname: x\nallowed_file_types: [PDF]\n");
    const bad = assay(["workflows", "import", "acme", file]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("allowed_file_types");
    // Bounded as over the API: 1e300 was an SQLite error, 9e15 a retention sweep's Invalid Date.
    for (const days of ["1e300", "9000000000000000", '"-1"', "-1"]) {
      writeFileSync(file, exp.out.replace("retention_days: null", `retention_days: ${days}`));
      const big = assay(["workflows", "import", "acme", file]);
      expect(big.code).toBe(1);
      expect(big.err).toContain("retention_days: must be an integer from 0 to 36500 or null");
    }
    expect(assay(["workflows", "export", "acme", "invoices"]).out).toContain("retention_days: null");
  });
  test("workflows import refuses what the API refuses: unknown keys and wrong types, never coerced", () => {
    const file = join(dir, "typed.yaml");
    const head = "slug: typed\nname: Typed\nallowed_file_types: [JSON]\n";
    const step = "steps:\n  - name: s\n    validator: syntax\n    config: {}\n";
    const cases: [string, string][] = [
      [`${head}fail_fats: false\n`, "  fail_fats: is not a known field"],
      [`${head}${step}    is_active: "no"\n`, "  steps[0].is_active: must be true or false"],
      [`${head}fail_fast: "yes"\n`, "  fail_fast: must be true or false"],
      [
        `${head}${step}    config: null\n`.replace("    config: {}\n", ""),
        "  steps[0].config: must be an object",
      ],
      [`${head}status: weird\n`, "  status: must be active or inactive"],
      [`${head}steps: abc\n`, "  steps: must be an array of steps"],
      [`${head}steps: [null]\n`, "  steps[0]: must be a step object {name, validator, config, is_active}"],
      [`${head}description: [1, 2]\n`, "  description: must be a string"],
      ["slug: typed\nname: 5\nallowed_file_types: [JSON]\n", "  name: must be a string"],
      [
        "slug: typed\nname: T\nallowed_file_types: JSON\n",
        "  allowed_file_types: must be an array of file types",
      ],
    ];
    for (const [doc, item] of cases) {
      writeFileSync(file, doc);
      expect(assay(["workflows", "import", "acme", file])).toEqual({
        code: 1,
        out: "",
        err: `assay workflows: ${file}: not a workflow definition\n${item}\n`,
      });
    }
    // Nothing was created by any of them; the same document, well typed, is.
    expect(assay(["workflows", "export", "acme", "typed"]).code).toBe(1);
    writeFileSync(file, `${head}fail_fast: true\n${step}    is_active: false\n`);
    expect(assay(["workflows", "import", "acme", file]).out).toContain("Created workflow typed (version 1)");
    // Imported again unchanged: the version stays.
    expect(assay(["workflows", "import", "acme", file]).out).toContain(
      "Unchanged: workflow typed (version 1)",
    );
  });
  test("a malformed workflow file is refused with its line and column, one line on stderr", () => {
    const cases: [string, string, string][] = [
      ["bad.json", '{"slug": "x" "name": "y"}', "Unexpected double-quoted-scalar token at line 1, column 14"],
      ["bad.yaml", "slug: x\nslug: y\n", "Map keys must be unique at line 2, column 1"],
    ];
    for (const [name, text, message] of cases) {
      const file = join(dir, name);
      writeFileSync(file, text);
      expect(assay(["workflows", "import", "acme", file])).toEqual({
        code: 1,
        out: "",
        err: `assay workflows: ${file}: not valid YAML/JSON: ${message}\n`,
      });
    }
  });
  test("a workflow file that is not UTF-8 is refused, not read with U+FFFD in its place", () => {
    // "café" in ISO-8859-1 (a lone 0xE9): until 2026-11-29 imported as "caf\uFFFD".
    const file = join(dir, "latin1.yaml");
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from('slug: latin\nname: "caf'),
        Buffer.from([0xe9]),
        Buffer.from('"\nallowed_file_types: [JSON]\nsteps: []\n'),
      ]),
    );
    const refusal = `${file}: not UTF-8 text (a workflow file is UTF-8)`;
    expect(assay(["workflows", "import", "acme", file])).toEqual({
      code: 1,
      out: "",
      err: `assay workflows: ${refusal}\n`,
    });
    expect(assay(["workflows", "export", "acme", "latin"]).code).toBe(1);
    const local = assay(["validate", "--local", "--workflow-file", file, file]);
    expect([local.code, local.err]).toEqual([2, `assay validate: ${refusal}\n`]);
  });
  test("settings get and set", () => {
    expect(assay(["settings", "set", "token_rotation_days", "90"]).code).toBe(0);
    expect(assay(["settings", "get"]).out).toContain("token_rotation_days = 90");
    expect(assay(["settings", "set", "token_rotation_days", "null"]).code).toBe(0);
    expect(assay(["settings", "set", "nope", "1"]).code).toBe(2);
  });
  test("commands on a data dir without an installation refuse, name it, and create nothing", () => {
    const typo = join(dir, "no-such-data");
    const named = `assay USAGE: No Assay installation in SQLite in ${typo}: name one with --data-dir or --database-url (or ASSAY_DATA_DIR, ASSAY_DATABASE_URL), or create one with "assay init".\n`;
    for (const args of [
      ["users", "list"],
      ["orgs", "list"],
      ["tokens", "list", "root"],
      ["settings", "get"],
      ["audit", "verify"],
      ["backup", join(dir, "empty-backup.db")],
      ["workflows", "export", "acme", "orders"],
    ]) {
      const r = assay([...args, "--data-dir", typo]);
      expect({ args, code: r.code, err: r.err }).toEqual({
        args,
        code: 1,
        err: named.replace("USAGE", args[0]!),
      });
    }
    expect(existsSync(typo)).toBe(false);
    expect(existsSync(join(dir, "empty-backup.db"))).toBe(false);
    // The source of a copy too: with --replace, its nothing would have replaced the target's rows.
    const copy = assay(["db", "copy", "--from", typo, "--to", dataDir, "--replace"]);
    expect(copy.code).toBe(1);
    expect(copy.err).toBe(named.replace("USAGE", "db"));
    expect(existsSync(typo)).toBe(false);
    expect(assay(["users", "list"]).out).toContain("root");
  });
  test("a misspelt ASSAY_* variable is named on stderr by every command, not only serve", () => {
    // `ASSAY_DATA_DIRR=/srv/assay assay init` initialised ./assay-data without a word.
    const run = (args: string[]) => {
      const p = Bun.spawnSync([process.execPath, join(import.meta.dir, "../src/main.ts"), ...args], {
        cwd: dir,
        env: { ...process.env, ASSAY_DATA_DIR: dataDir, ASSAY_DATA_DIRR: "/elsewhere", ASSAY_TOKN: "t" },
        stdin: "ignore",
      });
      return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
    };
    const warned = (c: string) =>
      `assay ${c}: warning: ASSAY_DATA_DIRR names no setting and is ignored (did you mean ASSAY_DATA_DIR?)\n` +
      `assay ${c}: warning: ASSAY_TOKN names no setting and is ignored (did you mean ASSAY_TOKEN?)\n`;
    const list = run(["users", "list"]);
    expect({ code: list.code, err: list.err }).toEqual({ code: 0, err: warned("users") });
    expect(list.out).toContain("root");
    // The token stays alone on stdout's last line: the warnings are on stderr.
    const t = run(["tokens", "create", "root", "--name", "env-check"]);
    expect({ code: t.code, err: t.err }).toEqual({ code: 0, err: warned("tokens") });
    expect(lastLine(t.out)).toMatch(/^assay_[A-Za-z0-9_-]{51}$/);
    expect(
      run(["validate", "x.json", "--org", "acme", "--workflow", "w", "--server", "http://127.0.0.1:1"]),
    ).toEqual({
      code: 2,
      out: "",
      err: `${warned("validate")}assay validate: --token (or ASSAY_TOKEN) is required\nRun "assay validate -h" for help.\n`,
    });
    // Help and version read no variable: nothing said.
    expect(run(["version"]).err).toBe("");
  });
  test("bad arguments on a data dir without an installation are still exit 2, said as such", () => {
    // `members list` without ORG read "No Assay installation" (exit 1): the command built a service
    // (and so opened the database) before it looked at its arguments; `settings set` read its keys
    // from the database.
    const typo = join(dir, "no-installation-here");
    for (const [args, says] of [
      [["members"], "usage: assay members add|set-role|remove|list …"],
      [["members", "frob"], 'unknown subcommand "frob"'],
      [["members", "add", "acme", "root"], "usage: assay members add ORG USERNAME ROLE"],
      [
        ["members", "add", "acme", "root", "boss"],
        'ROLE is one of viewer, executor, author, admin, not "boss"',
      ],
      [["members", "set-role", "acme", "root"], "usage: assay members set-role ORG USERNAME ROLE"],
      [["members", "remove", "acme"], "usage: assay members remove ORG USERNAME"],
      [["members", "list"], "usage: assay members list ORG"],
      [["settings", "set"], "usage: assay settings set KEY VALUE"],
      [["settings", "set", "nope", "1"], "usage: assay settings set KEY VALUE"],
      [["settings", "set", "token_rotation_days", "abc"], "VALUE must be a number of days"],
      [["users", "delete"], "usage: assay users delete USERNAME"],
      [["orgs", "suspend"], "usage: assay orgs suspend SLUG"],
      [["tokens", "list"], "usage: assay tokens list USERNAME"],
    ] as const) {
      const r = assay([...args, "--data-dir", typo]);
      const first = r.err.split("\n")[0]!;
      expect({ args, code: r.code, out: r.out, says: first.startsWith(`assay ${args[0]}: ${says}`) }).toEqual(
        {
          args,
          code: 2,
          out: "",
          says: true,
        },
      );
    }
    expect(existsSync(typo)).toBe(false);
  });
  test("bad arguments exit 2 on every subcommand: options it does not take, extra arguments, bad values", () => {
    const usage = (args: string[], says: string, stdin?: string | Uint8Array) => {
      const r = assay(args, stdin);
      expect({ args, code: r.code, out: r.out }).toEqual({ args, code: 2, out: "" });
      expect(r.err).toContain(says);
    };
    usage(["users", "delete", "nobody", "--admin"], "unknown option --admin");
    usage(["orgs", "suspend", "acme", "--name", "z"], "unknown option --name");
    usage(["tokens", "list", "root", "--expires-in", "3d"], "unknown option --expires-in");
    usage(["members", "list", "acme", "--name", "z"], "unknown option --name");
    usage(["orgs", "list", "extra"], "usage: assay orgs list");
    usage(["settings", "get", "extra"], 'unexpected argument "extra"');
    usage(["settings", "set", "token_rotation_days", "5", "extra"], "usage: assay settings set");
    usage(["settings", "set", "token_rotation_days", "abc"], "VALUE must be a number of days");
    usage(["version", "extra"], 'unexpected argument "extra"');
    usage(["tokens", "create", "root", "--name", "big", "--expires-in", "999999w"], "at most 36500 days");
    // The password comes from stdin only when asked to: never read unasked.
    usage(["users", "set-password", "root"], "needs --password-stdin", "secret-password\n");
    // A password that is not UTF-8 (Latin-1 "passwörd-passwörd") is refused: every such byte was
    // read as U+FFFD, so the web form's UTF-8 "ö" never matched, and "ö" and "ü" were one password.
    const latin1 = Buffer.from("passw\xf6rd-passw\xf6rd\n", "latin1");
    usage(
      ["users", "set-password", "root", "--password-stdin"],
      "the password on stdin is not UTF-8 text",
      latin1,
    );
    usage(["users", "create", "lat", "--password-stdin"], "the password on stdin is not UTF-8 text", latin1);
    expect(assay(["users", "list"]).out).not.toContain("lat");
    usage(["migrate", "--database-url", "postgres://%zz@/x"], "database URL is not a valid URL");
    usage(
      ["serve", "--port", "0", "--base-url", "https://assay.example.com/?x=1"],
      'base URL "https://assay.example.com/?x=1" must not have a query (?…) or fragment (#…)',
    );
    // No command at all: the usage, as an error.
    const bare = assay([]);
    expect([bare.code, bare.out]).toEqual([2, ""]);
    expect(bare.err).toContain("Usage");
  });
  test("a file further up the data dir's path is named, for serve and init", () => {
    const file = join(dir, "a-file-above");
    writeFileSync(file, "x");
    const data = join(file, "data");
    for (const args of [
      ["serve", "--port", "0", "--data-dir", data],
      ["init", "--org", "x", "--admin", "r", "--data-dir", data],
    ]) {
      const r = assay(args);
      expect({ code: r.code, out: r.out, err: r.err }).toEqual({
        code: 1,
        out: "",
        err: `assay ${args[0]}: cannot create the data directory ${data}: ${file} is a file, not a directory\n`,
      });
    }
  });
  test("db copy with a URL that is not postgres:// is exit 2, nothing created, no password shown", () => {
    for (const [flag, url, shown] of [
      ["--to", "mysql://u:pw@db.example/x", "mysql://u:***@db.example/x"],
      ["--to", "postgre://db.example/x", "postgre://db.example/x"],
      ["--from", "POSTGRES://db.example/x", "POSTGRES://db.example/x"],
    ]) {
      const args =
        flag === "--to" ? ["--from", dataDir, "--to", url!] : ["--from", url!, "--to", join(dir, "t")];
      const r = assay(["db", "copy", ...args]);
      expect(r).toEqual({
        code: 2,
        out: "",
        err: `assay db: ${flag} "${shown}" is a URL but not postgres://…: give a postgres:// URL or a data dir\nRun "assay db -h" for help.\n`,
      });
    }
    expect(existsSync(join(process.cwd(), "mysql:"))).toBe(false);
    expect(existsSync(join(dir, "t"))).toBe(false);
  });
  test("db copy checks a URL's query and host as serve does: exit 2 naming the flag, not the client's NaN at the first connection", () => {
    // Before: connect_timeout=abc stopped the copy with Bun's "options.connection_timeout must be
    // … Received NaN", exit 1; target_session_attrs=standby was ignored.
    const r = assay([
      "db",
      "copy",
      "--from",
      "postgres://u:pw@db.example/x?target_session_attrs=standby",
      "--to",
      "postgres://u:pw@127.0.0.1:1/x?connect_timeout=abc&keepalives=1",
    ]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: `assay db: Invalid configuration:\n  --from: target_session_attrs is a libpq option that Bun's PostgreSQL client, which Assay uses, does not implement: remove it from the URL (docs/postgres.md)\n  --to: connect_timeout "abc" is not a whole number of seconds (0 to 2147483647)\n`,
    });
  });
  test("db copy refuses a URL naming several hosts as serve does: exit 2 naming the flag", () => {
    // Before: "--to" with ports (no URL to WHATWG's parser) passed the check unread; "--from"
    // reached Bun's client, which reads "a,b" as one host name.
    const r = assay([
      "db",
      "copy",
      "--from",
      "postgres://u:pw@db1.example,db2.example/x",
      "--to",
      "postgres://u:pw@127.0.0.1:1,127.0.0.2:1/x",
    ]);
    const why =
      "Bun's PostgreSQL client, which Assay uses, connects to one host: it does not try the hosts in turn as libpq does, but reads the list as a single host name and reaches none of them. Name one host (for failover, one address that follows the primary: a virtual IP, a DNS name or a proxy) (docs/postgres.md)";
    expect(r).toEqual({
      code: 2,
      out: "",
      err: `assay db: Invalid configuration:\n  --from: the URL names several hosts (db1.example,db2.example): ${why}\n  --to: the URL names several hosts (127.0.0.1:1,127.0.0.2:1): ${why}\n`,
    });
  });
  test("a data dir that is a file is said in words, for serve and init", () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "x");
    for (const args of [
      ["serve", "--port", "0", "--data-dir", file],
      ["init", "--org", "x", "--admin", "r", "--data-dir", file],
    ]) {
      const r = assay(args);
      expect({ code: r.code, err: r.err }).toEqual({
        code: 1,
        err: `assay ${args[0]}: the data directory ${file} is a file, not a directory\n`,
      });
    }
  });
  // README: "A command that changes data names the database in its message"; five of them did
  // not (2026-11-29), so one run on a mistyped data dir read like a success on the right one.
  test("every command that changes data names the database in what it prints", () => {
    const where = `SQLite in ${dataDir}`;
    const said = (args: string[], stdin?: string) => {
      const r = assay(args, stdin);
      expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: "" });
      return r.out.split("\n")[0];
    };
    expect(said(["users", "create", "named-u", "--password-stdin"], "a long password here")).toMatch(
      new RegExp(`^Created user named-u \\(id \\d+\\) \\(${where}\\)\\.$`),
    );
    expect(said(["orgs", "create", "named-o"])).toBe(`Created organization named-o (${where}).`);
    expect(said(["members", "add", "named-o", "named-u", "viewer"])).toBe(
      `named-u is now viewer of named-o (${where}).`,
    );
    expect(said(["members", "set-role", "named-o", "named-u", "author"])).toBe(
      `named-u is now author of named-o (${where}).`,
    );
    expect(said(["tokens", "create", "named-u", "--name", "n"])).toMatch(
      new RegExp(`^Token \\d+ "n" for named-u \\(${where}; shown once\\):$`),
    );
  });

  test("backup writes a consistent copy and refuses to overwrite", () => {
    const file = join(dir, "backup.db");
    expect(assay(["backup", file]).code).toBe(0);
    expect(existsSync(file)).toBe(true);
    expect(assay(["backup", file]).code).toBe(1);
  });
});
