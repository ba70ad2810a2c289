// Every command's options and help, in one table: the parser (args.ts) reads the options, `assay
// COMMAND -h` prints the help. An option a command takes and its help are declared side by side,
// so the help cannot omit one (test/cli-help.test.ts checks every command).
import { SETTINGS, envName, flagName } from "../config.ts";
import { DATA_HELP, DATA_OPTIONS, HELP_OPTION, type Options } from "./args.ts";

export interface CommandSpec {
  summary: string;
  usage: string[];
  about?: string;
  options: Options;
  /** [left column, description] per option, -h included by render(). */
  optionHelp: (readonly [string, string])[];
}

const s = { type: "string" } as const;
const b = { type: "boolean" } as const;
const SERVER_HELP = [
  ["--server URL", "the Assay server (ASSAY_SERVER)"],
  ["--token T", "an API token (ASSAY_TOKEN)"],
] as const;

export const COMMANDS: Record<string, CommandSpec> = {
  serve: {
    summary: "run the server",
    usage: ["assay serve [options]"],
    about:
      "Runs the server. An empty data dir is created and migrated. Each option is also an\nenvironment variable; the option wins. One server per port and per data dir.",
    options: Object.fromEntries(SETTINGS.map((x) => [flagName(x.key).slice(2), s])),
    optionHelp: SETTINGS.map((x) => [
      `${flagName(x.key)} ${x.kind === "int" ? "N" : x.kind === "bool" ? "true|false" : "VALUE"}`,
      `${x.help} [${x.def ?? "unset"}] (${envName(x.key)})`,
    ]),
  },
  init: {
    summary: "first-run setup (admin, org, token)",
    usage: ["assay init --org SLUG --admin USERNAME [--password-stdin] [--org-name NAME]"],
    about:
      "First-run setup from the command line (the web app's setup form does the same): an instance\nadmin, one org where that user is Admin, and an API token, printed once on the last line of\nstdout. Everything is checked before anything is written; a failed init leaves nothing behind.\nRefuses on an initialised data dir.",
    options: { org: s, "org-name": s, admin: s, "password-stdin": b, ...DATA_OPTIONS },
    optionHelp: [
      ["--org SLUG", "the first organization's slug"],
      ["--org-name NAME", "its display name [the slug]"],
      ["--admin USERNAME", "the instance administrator's username"],
      [
        "--password-stdin",
        "read the admin's web sign-in password from stdin (8+ characters); at a terminal, asked for and not shown",
      ],
      ...DATA_HELP,
    ],
  },
  users: {
    summary: "manage users",
    usage: [
      "assay users create USERNAME [--admin] [--password-stdin] [--name N] [--email E]",
      "assay users list",
      "assay users delete USERNAME",
      "assay users set-password USERNAME --password-stdin",
    ],
    options: { admin: b, "password-stdin": b, name: s, email: s, ...DATA_OPTIONS },
    optionHelp: [
      ["--admin", "create an instance administrator"],
      [
        "--password-stdin",
        "read the password from stdin (8+ characters); at a terminal, asked for and not shown",
      ],
      ["--name N", "display name"],
      ["--email E", "email address"],
      ...DATA_HELP,
    ],
  },
  orgs: {
    summary: "manage organizations",
    usage: [
      "assay orgs create SLUG [--name N]",
      "assay orgs list",
      "assay orgs suspend SLUG | restore SLUG | delete SLUG",
    ],
    about:
      "Deleting is soft: the org's runs and history stay, its members get 403, and the slug stays\nreserved so that `restore` can bring it back. Until then it takes no suspension, new member,\nrole or workflow (exit 1).",
    options: { name: s, ...DATA_OPTIONS },
    optionHelp: [["--name N", "display name [the slug]"], ...DATA_HELP],
  },
  members: {
    summary: "manage memberships",
    usage: [
      "assay members add ORG USERNAME ROLE      (ROLE: viewer, executor, author, admin)",
      "assay members set-role ORG USERNAME ROLE (an existing member's role)",
      "assay members remove ORG USERNAME",
      "assay members list ORG",
    ],
    options: { ...DATA_OPTIONS },
    optionHelp: [...DATA_HELP],
  },
  tokens: {
    summary: "manage API tokens",
    usage: [
      "assay tokens create USERNAME --name N [--expires-in 30d]   (the token alone on the last line)",
      "assay tokens list USERNAME",
      "assay tokens revoke ID                                     (ID: a number, as tokens list shows)",
    ],
    options: { name: s, "expires-in": s, ...DATA_OPTIONS },
    optionHelp: [
      ["--name N", "the token's name"],
      ["--expires-in D", "lifetime: 30d, 2w, 12h or a number of days [the instance default]"],
      ...DATA_HELP,
    ],
  },
  settings: {
    summary: "instance settings",
    usage: ["assay settings get", "assay settings set KEY VALUE"],
    about:
      "KEY: token_default_ttl_days, token_max_ttl_days, token_rotation_days, audit_retention_days;\nVALUE: a number of days from 1 to 36500, or null.",
    options: { ...DATA_OPTIONS },
    optionHelp: [...DATA_HELP],
  },
  workflows: {
    summary: "workflows as code: export, apply, import",
    usage: [
      "assay workflows export ORG SLUG [--format yaml|json] [--server URL --token T [--timeout S]]",
      "assay workflows apply ORG FILE… --server URL --token T [--timeout S]",
      "assay workflows import ORG FILE",
    ],
    about:
      "A workflow as a YAML/JSON document, so a repository can hold it. With --server (or\nASSAY_SERVER) `export` and `apply` go through the API with a token (Author role); without, `export`\nand `import` read and write the data dir. `apply` creates the workflow or updates it to match the\nfile, prints what changed, and changes nothing when it already matches. FILE - is stdin.",
    options: { format: s, server: s, token: s, timeout: s, ...DATA_OPTIONS },
    optionHelp: [
      ["--format yaml|json", "export format [yaml]"],
      ...SERVER_HELP,
      ["--timeout SECONDS", "give up on a request the server does not answer [60]"],
      ...DATA_HELP,
    ],
  },
  audit: {
    summary: "verify the audit log, print its head",
    usage: ["assay audit verify [--anchor SEQ:HASH]", "assay audit head"],
    about:
      'verify walks the audit log\'s hash chain from its oldest entry to its head and exits 0 when\nintact; otherwise it prints the first broken link (an entry changed, removed or inserted) and\nexits 1. --anchor checks that an entry recorded elsewhere earlier is still there, unchanged.\nhead prints the chain\'s head {"seq", "hash", "created_at"} as JSON, to record outside\nAssay (docs/audit.md).',
    options: { anchor: s, ...DATA_OPTIONS },
    optionHelp: [
      ["--anchor SEQ:HASH", "an earlier head: the JSON `assay audit head` printed, or its seq:hash"],
      ...DATA_HELP,
    ],
  },
  backup: {
    summary: "copy the database",
    usage: ["assay backup FILE"],
    about:
      "Consistent online copy of the SQLite database (the server may be running). On PostgreSQL\n(--database-url), use pg_dump instead: docs/postgres.md.",
    options: { ...DATA_OPTIONS },
    optionHelp: [...DATA_HELP],
  },
  migrate: {
    summary: "upgrade the schema",
    usage: ["assay migrate"],
    about: "Brings the database's schema up to this build's (the server also does it at start).",
    options: { ...DATA_OPTIONS },
    optionHelp: [...DATA_HELP],
  },
  db: {
    summary: "copy between SQLite and PostgreSQL",
    usage: ["assay db copy --from DIR|URL --to DIR|URL [--replace]"],
    about:
      "Copies every row (content included) between a data dir (SQLite) and PostgreSQL, either way,\nthen verifies each table's row count and SHA-256 on both sides. Re-running a finished copy\nchanges nothing; a target holding other rows is refused unless --replace empties it first.\nStop the servers writing to the source first.",
    options: { from: s, to: s, replace: b },
    optionHelp: [
      ["--from DIR|URL", "the source: a data dir, or postgres://…"],
      ["--to DIR|URL", "the target: a data dir, or postgres://…"],
      ["--replace", "empty a target that holds other rows first"],
    ],
  },
  validate: {
    summary: "validate files against a workflow (CI; exit 0 passed, 1 failed, 2 error)",
    usage: [
      "assay validate FILE… --workflow SLUG --org ORG [--server URL] [--token T] [options]",
      "assay validate --local --workflow-file WORKFLOW.yaml FILE… [options]",
    ],
    about:
      "Validates files against a workflow on a server, or locally from an exported workflow document\n(assay workflows export). Prints findings as file:line:column severity code message.\nExit codes: 0 every run succeeded, 1 a run failed, 2 error (arguments, network, auth, server).",
    options: {
      workflow: s,
      org: s,
      server: s,
      token: s,
      local: b,
      "workflow-file": s,
      format: s,
      output: s,
      "fail-on": s,
      "content-type": s,
      wait: s,
      timeout: s,
      jobs: s,
    },
    optionHelp: [
      ["--workflow SLUG", "the workflow to run"],
      ["--org ORG", "its organization"],
      ...SERVER_HELP,
      ["--local", "validate in this process, no server (needs --workflow-file)"],
      ["--workflow-file F", "an exported workflow document, with --local"],
      ["--format F", "text, json, junit, sarif or html [text]"],
      ["--output FILE", "write the report to FILE (a summary still goes to stdout)"],
      ["--fail-on error|warning", "also fail on warnings [error]"],
      [
        "--content-type TYPE",
        "content type of every FILE [from the extension: .json .xml .yaml .csv .tsv .txt]",
      ],
      ["--wait SECONDS", "how long the server may hold a request (0: poll at once)"],
      ["--timeout SECONDS", "give up waiting for a run [600]"],
      ["--jobs N", "files submitted at once [4]"],
    ],
  },
  version: { summary: "print the version", usage: ["assay version"], options: {}, optionHelp: [] },
};

/** Options as the parser wants them: the command's and -h. */
export const optionsOf = (command: string): Options => ({ ...COMMANDS[command]!.options, ...HELP_OPTION });

const WIDTH = 100;

/** Two columns, the second wrapped at WIDTH and aligned, whatever the first's length. */
export function columns(rows: readonly (readonly [string, string])[], indent = 2): string {
  const left = Math.min(Math.max(...rows.map(([l]) => l.length)) + 2, 32);
  const room = WIDTH - indent - left;
  return rows
    .map(([l, r]) => {
      const lines: string[] = [];
      let line = "";
      for (const word of r.split(" ")) {
        if (line && line.length + 1 + word.length > room) {
          lines.push(line);
          line = word;
        } else line = line ? `${line} ${word}` : word;
      }
      lines.push(line);
      const pad = " ".repeat(indent + left);
      const head =
        l.length + 2 > left ? `${" ".repeat(indent)}${l}\n${pad}` : `${" ".repeat(indent)}${l.padEnd(left)}`;
      return head + lines.join(`\n${pad}`);
    })
    .join("\n");
}

export const commandHelp = (command: string): string => renderHelp(COMMANDS[command]!);

export function renderHelp(c: CommandSpec): string {
  const usage = c.usage.map((u) => `  ${u}`).join("\n");
  const about = c.about ? `\n\n${c.about}` : "";
  return `Usage:\n${usage}${about}\n\nOptions:\n${columns([...c.optionHelp, ["-h, --help", "show this help"]])}`;
}

export const USAGE = `Assay — validation workflows over a REST API, in one binary.

Usage: assay COMMAND [arguments] [options]     assay COMMAND -h for a command's help

Commands:
${columns(Object.entries(COMMANDS).map(([name, c]) => [name, c.summary]))}

Every command that reads the data takes --data-dir DIR (SQLite, default ./assay-data) or
--database-url postgres://… (ASSAY_DATABASE_URL).

Exit codes: 0 success, 1 the command failed, 2 bad arguments (validate: 1 a run failed, 2 error).`;
