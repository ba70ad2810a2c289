// Help texts. `assay COMMAND --help` prints the command's entry.
import { SETTINGS, envName, flagName } from "../config.ts";

export const COMMANDS: Record<string, string> = {
  serve: `assay serve [options]
  Runs the server. An empty data dir is created and migrated.
${SETTINGS.map((s) => `  ${`${flagName(s.key)} (${envName(s.key)})`.padEnd(58)} ${s.help} [${s.def ?? "unset"}]`).join("\n")}`,
  init: `assay init --org SLUG --admin USERNAME [--password-stdin] [--data-dir DIR]
  First-run setup: an instance admin, one org where that user is Admin, and one API token,
  printed once on the last line of stdout. Refuses on an initialised data dir.`,
  users: `assay users create USERNAME [--admin] [--password-stdin] [--name N] [--email E]
assay users list | delete USERNAME | set-password USERNAME --password-stdin   [--data-dir DIR]`,
  orgs: `assay orgs create SLUG [--name N]
assay orgs list | suspend SLUG | restore SLUG | delete SLUG   [--data-dir DIR]`,
  members: `assay members add ORG USERNAME ROLE      (ROLE: viewer, executor, author, admin)
assay members remove ORG USERNAME | list ORG   [--data-dir DIR]`,
  tokens: `assay tokens create USERNAME --name N [--expires-in 30d]   (token alone on the last line)
assay tokens list USERNAME | revoke ID   [--data-dir DIR]`,
  settings: `assay settings get
assay settings set KEY VALUE   (token_default_ttl_days, token_max_ttl_days, token_rotation_days,
                                audit_retention_days; days or null)`,
  audit: `assay audit verify [--anchor SEQ:HASH] [--data-dir DIR | --database-url URL]
  Walks the audit log's hash chain from its oldest entry to its head; prints the first broken
  link and exits 1 (an entry changed, removed or inserted), exit 0 when intact. --anchor checks
  that an entry recorded elsewhere earlier (assay audit head) is still there, unchanged.
assay audit head
  Prints the chain's head {"seq", "hash", "created_at"} as JSON, to record outside Assay.`,
  workflows: `assay workflows export ORG SLUG [--format yaml|json]   (document on stdout)
assay workflows import ORG FILE   (creates, or replaces the workflow with the same slug; FILE - = stdin)`,
  backup: `assay backup FILE [--data-dir DIR]
  Consistent online copy of the SQLite database (the server may be running). On PostgreSQL
  (--database-url), use pg_dump instead: docs/postgres.md.`,
  migrate: `assay migrate [--data-dir DIR | --database-url URL]
  Brings the database's schema up to this build's (the server also does it at start).`,
  db: `assay db copy --from DIR|URL --to DIR|URL [--replace]
  Copies every row (content included) between a data dir (SQLite) and PostgreSQL, either way,
  then verifies each table's row count and SHA-256 on both sides. Re-running a finished copy
  changes nothing; a target holding other rows is refused unless --replace empties it first.
  Stop the servers writing to the source first.`,
  validate: `assay validate FILE… --workflow SLUG --org ORG [--server URL] [--token T] [options]
assay validate --local --workflow-file WORKFLOW.yaml FILE… [options]
  Validates files against a workflow on a server (ASSAY_SERVER, ASSAY_TOKEN), or locally from an
  exported workflow document (assay workflows export). Prints findings as
  file:line:column severity code message.
  --format text|json|junit|sarif|html   output format [text]
  --output FILE                         write the report to FILE (a summary still goes to stdout)
  --fail-on error|warning               also fail on warnings [error]
  --content-type TYPE                   content type of every FILE (default: from the extension:
                                        .json .xml .yaml/.yml .csv .tsv .txt)
  --wait SECONDS                        how long the server may hold a request (0: poll at once)
  --timeout SECONDS                     give up waiting for a run [600]
  --jobs N                              files submitted at once [4]
  Exit codes: 0 every run succeeded, 1 a run failed, 2 error (arguments, network, auth, server).`,
  version: "assay version\n  Prints the version.",
};

export const USAGE = `Assay — validation workflows over a REST API, in one binary.

Usage: assay COMMAND [arguments] [--help]

Commands:
  serve       run the server
  init        first-run setup (admin, org, token)
  users       manage users          orgs        manage organizations
  members     manage memberships    tokens      manage API tokens
  settings    instance settings     workflows   export / import workflow documents
  backup      copy the database     version     print the version
  audit       verify the audit log, print its head
  migrate     upgrade the schema    db          copy between SQLite and PostgreSQL
  validate    validate files against a workflow (CI; exit 0 passed, 1 failed, 2 error)

Every command that reads the data takes --data-dir DIR (SQLite, default ./assay-data) or
--database-url postgres://… (ASSAY_DATABASE_URL).

Exit codes: 0 success, 1 the command failed, 2 bad arguments.`;
