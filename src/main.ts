// Entry point of the `assay` executable: parse the command line, dispatch, map failures to
// exit codes (0 ok, 1 failed, 2 bad arguments).
import { backup } from "./cli/backup.ts";
import * as dbCommands from "./cli/db.ts";
import { UsageError, parseArgs } from "./cli/args.ts";
import * as admin from "./cli/admin.ts";
import { audit } from "./cli/audit.ts";
import { COMMANDS, USAGE } from "./cli/help.ts";
import { VALIDATE_BOOLEANS, validate } from "./cli/validate.ts";
import { workflows } from "./cli/workflows.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { describeDb } from "./db/open.ts";
import { AppError } from "./errors.ts";
import { startServer } from "./server.ts";
import { VERSION } from "./version.ts";

// Per command: `--admin` is a switch for `users create` but takes a USERNAME for `init`.
const BOOLEANS: Record<string, readonly string[]> = {
  init: ["help", "password_stdin"],
  users: ["help", "admin", "password_stdin"],
  validate: VALIDATE_BOOLEANS,
  db: ["help", "replace"],
};

async function serve(flags: Record<string, string>) {
  const config = loadConfig(process.env, flags);
  const server = await startServer(config);
  process.stdout.write(`Assay ${VERSION} listening on ${server.url} (data: ${describeDb(config)})\n`);
  const shutdown = async (signal: string) => {
    process.stdout.write(`${signal}: shutting down\n`);
    await server.stop();
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "help" || command === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  if (command === "--version" || command === "version") {
    process.stdout.write(`assay ${VERSION}\n`);
    return 0;
  }
  if (!(command in COMMANDS)) {
    process.stderr.write(`assay: unknown command "${command}"\n\n${USAGE}\n`);
    return 2;
  }
  try {
    const p = parseArgs(rest, BOOLEANS[command] ?? ["help"]);
    if (p.bools.has("help")) {
      process.stdout.write(`${COMMANDS[command]}\n`);
      return 0;
    }
    switch (command) {
      case "serve":
        if (p.positionals.length || p.bools.size)
          throw new UsageError("usage: assay serve [--option value …] (see assay serve --help)");
        await serve(p.flags);
        return -1; // keeps running
      case "init":
        await admin.init(p);
        return 0;
      case "users":
        await admin.users(p);
        return 0;
      case "orgs":
        await admin.orgs(p);
        return 0;
      case "members":
        await admin.members(p);
        return 0;
      case "tokens":
        await admin.tokens(p);
        return 0;
      case "settings":
        await admin.settings(p);
        return 0;
      case "workflows":
        await workflows(p);
        return 0;
      case "backup":
        await backup(p);
        return 0;
      case "audit":
        return await audit(p);
      case "migrate":
        await dbCommands.migrate(p);
        return 0;
      case "db":
        await dbCommands.db(p);
        return 0;
      case "validate":
        // Its own exit codes (0 passed, 1 failed, 2 error); it maps its failures itself.
        return await validate(p);
    }
    return 2;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`assay ${command}: ${e.message}\n`);
      return 2;
    }
    if (e instanceof ConfigError) {
      process.stderr.write(`assay ${command}: ${e.message}\n`);
      return 2;
    }
    if (e instanceof AppError) {
      process.stderr.write(
        `assay ${command}: ${e.message}\n${e.errors.map((x) => `  ${x.field}: ${x.message}\n`).join("")}`,
      );
      return 1;
    }
    process.stderr.write(`assay ${command}: ${(e as Error).message}\n`);
    return 1;
  }
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exit(code);
}
