// The `assay` executable's program (its entry is src/main.ts): parse the command line, dispatch,
// map failures to exit codes (0 ok, 1 failed, 2 bad arguments) and to one message style:
// `assay COMMAND: what`.
import { backup } from "./backup.ts";
import * as dbCommands from "./db.ts";
import { UsageError, parseArgs } from "./args.ts";
import * as admin from "./admin.ts";
import { audit } from "./audit.ts";
import { COMMANDS, USAGE, commandHelp, optionsOf } from "./help.ts";
import { validate } from "./validate.ts";
import { createLocal, loadLocalWorkflow } from "./validate/local.ts";
import { workflows } from "./workflows.ts";
import { drained, err, out } from "./out.ts";
import { CLIENT_ENV, envWarning, nearest } from "./env.ts";
import { ConfigError, SETTINGS, envName, loadConfig, unknownEnvironment } from "../config.ts";
import { DataDirLockedError } from "../db/lock.ts";
import { describeDb } from "../db/open.ts";
import { createLogger, routeConsole } from "../lib/log.ts";
import { TEST_CLOCK_ENV, skewClock, testClockOffset } from "../lib/test-clock.ts";
import { AppError } from "../errors.ts";
import { PortInUseError, startServer } from "../server.ts";
import { VERSION } from "../version.ts";

async function serve(flags: Record<string, string>) {
  const config = loadConfig(process.env, flags);
  // The runtime's own warnings (bun:sql's) as JSON log lines, like the server's (docs/deploy.md).
  routeConsole(createLogger(config.log_level));
  for (const u of unknownEnvironment(process.env)) void err(envWarning("assay serve", u));
  // Test servers only (src/lib/test-clock.ts): before anything reads the clock.
  let offset = 0;
  try {
    offset = testClockOffset(process.env);
  } catch (e) {
    throw new ConfigError([(e as Error).message]);
  }
  if (offset) {
    skewClock(offset);
    createLogger(config.log_level).warn(`clock moved (${TEST_CLOCK_ENV}): for test servers only`, {
      offset_ms: offset,
    });
  }
  const server = await startServer(config);
  // Before the banner: whoever waits for it may signal at once, and must get a clean stop.
  // A signal while stopping changes nothing: with `once`, the same signal again (a second Ctrl-C,
  // a supervisor that repeats its SIGTERM) met the default action and killed the process mid-drain
  // (a waiting client's connection dropped, lock file and WAL left behind). SIGKILL stops at once.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      void out(
        `${signal}: already shutting down (running steps have the grace period; SIGKILL stops at once)\n`,
      );
      return;
    }
    stopping = true;
    void out(`${signal}: shutting down\n`);
    await server.stop();
    await drained();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  // A closed terminal or `kill -HUP` killed the process outright (lock file and WAL left behind).
  process.on("SIGHUP", () => void shutdown("SIGHUP"));
  void server.fatal.then(async (why) => {
    await err(`assay serve: stopped: ${why}\n`);
    process.exit(1);
  });
  void out(`Assay ${VERSION} listening on ${server.url} (data: ${describeDb(config)})\n`);
  void out(`${nextStep(server.url, server.setupCode, config.database_url ? null : config.data_dir)}\n`);
}

/** What an operator does next, printed under the address. */
function nextStep(url: string, setupCode: string | null, dataDir: string | null): string {
  const where = dataDir ? `--data-dir ${dataDir}` : "--database-url URL";
  if (setupCode)
    return [
      "No user yet. Next: open the address above in a browser and create the first administrator",
      `and organization with the one-time setup code ${setupCode}`,
      `(or on this machine: assay init --org SLUG --admin USERNAME --password-stdin ${where}).`,
    ].join("\n");
  return `Next: sign in at ${url}/ (API: ${url}/api/docs; tokens: assay tokens create USERNAME --name N).`;
}

/** The local validation engine, for `validate --local` (the light client has none). */
export const LOCAL_ENGINE = { load: loadLocalWorkflow, create: createLocal };

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "help" && rest.length) {
    // `assay help users` (git's habit): that command's help, as `assay users -h` prints it.
    const topic = rest[0]!;
    // `assay help help` (git answers it too): the usage, which is what `help` prints.
    if (topic === "help") {
      void out(`${USAGE}\n`);
      return 0;
    }
    if (Object.hasOwn(COMMANDS, topic)) {
      void out(`${commandHelp(topic)}\n`);
      return 0;
    }
    const guess = nearest(topic, Object.keys(COMMANDS));
    void err(
      `assay help: unknown command "${topic}"${guess ? ` (did you mean "${guess}"?)` : ""}\nRun "assay help" for the commands.\n`,
    );
    return 2;
  }
  if (!command || command === "--help" || command === "help" || command === "-h") {
    // Asked for: the usage is the answer (stdout, 0). No command at all: a usage error (stderr, 2).
    void (command ? out : err)(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  if (command === "--version" || command === "-v") {
    if (rest.length) {
      void err(`assay ${command}: unexpected argument "${rest[0]}"\n`);
      return 2;
    }
    void out(`assay ${VERSION}\n`);
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, command)) {
    const guess = command.startsWith("-") ? null : nearest(command, Object.keys(COMMANDS));
    void err(
      `assay: unknown command "${command}"${guess ? ` (did you mean "${guess}"?)` : ""}\n\n${USAGE}\n`,
    );
    return 2;
  }
  try {
    const p = parseArgs(rest, optionsOf(command));
    if (p.bools.has("help")) {
      void out(`${commandHelp(command)}\n`);
      return 0;
    }
    // `serve` warns once its settings are read; the others read ASSAY_DATA_DIR, ASSAY_DATABASE_URL,
    // ASSAY_SERVER or ASSAY_TOKEN, and a misspelt one pointed them elsewhere without a word.
    if (command !== "serve" && command !== "version") {
      const names = [...SETTINGS.map((x) => envName(x.key)), ...CLIENT_ENV];
      for (const u of unknownEnvironment(process.env))
        void err(envWarning(`assay ${command}`, { name: u.name, meant: nearest(u.name, names) }));
    }
    switch (command) {
      case "serve":
        if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
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
        return await workflows(p);
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
        return await validate(p, LOCAL_ENGINE);
      case "version":
        if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
        void out(`assay ${VERSION}\n`);
        return 0;
    }
    return 2;
  } catch (e) {
    return report(command, e);
  }
}

/** One style for every failure: `assay COMMAND: what went wrong`, then the exit code. */
export function report(command: string, e: unknown, program = "assay"): number {
  const say = (text: string) => void err(`${program} ${command}: ${text}\n`);
  if (e instanceof UsageError) {
    say(`${e.message}\nRun "${program} ${command} -h" for help.`);
    return 2;
  }
  if (e instanceof ConfigError) {
    say(e.message);
    return 2;
  }
  if (e instanceof AppError) {
    // A detail that only repeats the headline ("already a member" twice) is left out: one line.
    const details = e.errors.filter((x) => x.message !== e.message);
    say(`${e.message}${details.map((x) => `\n  ${x.field}: ${x.message}`).join("")}`);
    return 1;
  }
  if (e instanceof DataDirLockedError || e instanceof PortInUseError) {
    say(e.message);
    return 1;
  }
  say((e as Error)?.message ?? String(e));
  return 1;
}
