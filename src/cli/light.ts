// `assay-validate`: the CI client alone, a single JavaScript file for Node ≥ 20 and Bun
// (scripts/build.ts). The same options, output and exit codes as `assay validate` against a
// server, without the server or its validators (no --local). Decision: docs/decisions.md.
import { UsageError, parseArgs } from "./args.ts";
import { COMMANDS, type CommandSpec, optionsOf, renderHelp } from "./help.ts";
import { envWarning, misspeltClientEnv } from "./env.ts";
import { err, out } from "./out.ts";
import { validate } from "./validate.ts";
import { VERSION } from "../version.ts";

const PROGRAM = "assay-validate";

/** `assay validate`'s help without what needs the server binary (--local). */
function help(): string {
  const v = COMMANDS.validate!;
  const spec: CommandSpec = {
    ...v,
    usage: v.usage.filter((u) => !u.includes("--local")).map((u) => u.replace("assay validate", PROGRAM)),
    about: `${v.about}\nThe light client of Assay: for --local, use the assay binary.`,
    optionHelp: [
      ...v.optionHelp.filter(([o]) => !/--local|--workflow-file/.test(o)),
      ["-v, --version", "print the version (alone, as the only argument)"],
    ],
  };
  return renderHelp(spec);
}

export async function lightMain(argv: string[]): Promise<number> {
  if (argv[0] === "--version" || argv[0] === "-v") {
    // As `assay --version`: an argument after it is a mistake (exit 2), not ignored.
    if (argv.length > 1) {
      await err(`${PROGRAM}: unexpected argument "${argv[1]}"\nRun "${PROGRAM} -h" for help.\n`);
      return 2;
    }
    await out(`${PROGRAM} ${VERSION}\n`);
    return 0;
  }
  try {
    const p = parseArgs(argv, optionsOf("validate"));
    // As `assay` does: asked for, the help is the answer (stdout, 0); no argument at all is a
    // usage error (stderr, 2).
    if (argv.length === 0) {
      await err(`${help()}\n`);
      return 2;
    }
    if (p.bools.has("help")) {
      await out(`${help()}\n`);
      return 0;
    }
    for (const u of misspeltClientEnv(process.env)) await err(envWarning(PROGRAM, u));
    return await validate(p, null, PROGRAM);
  } catch (e) {
    const message =
      e instanceof UsageError ? `${e.message}\nRun "${PROGRAM} -h" for help.` : (e as Error).message;
    await err(`${PROGRAM}: ${message}\n`);
    return 2;
  }
}

process.exitCode = await lightMain(process.argv.slice(2));
