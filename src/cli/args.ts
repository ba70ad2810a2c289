// Command-line parsing through node:util's parseArgs (strict: an unknown option or a missing
// value is an error, never ignored), with one wording for every command's mistakes. Each command
// declares its options (src/cli/commands.ts); `-h`/`--help` is everywhere.
import { parseArgs as parseNodeArgs } from "node:util";
import { nearest } from "../lib/nearest.ts";
import { utf8Text } from "../lib/text.ts";

export interface Parsed {
  positionals: string[];
  /** String options by snake_case name (`--data-dir` → data_dir). */
  flags: Record<string, string>;
  /** Boolean options given, by snake_case name. */
  bools: Set<string>;
}

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
}
/** Options by their long name as typed, without the dashes: `data-dir`. */
export type Options = Record<string, OptionSpec>;

export class UsageError extends Error {}

/** Every command has it. */
export const HELP_OPTION: Options = { help: { type: "boolean", short: "h" } };

/**
 * The options of every command that works on an instance's database (the admin commands, backup,
 * migrate, db, workflows without --server). One more global option is added here and in DATA_HELP.
 */
export const DATA_OPTIONS: Options = { "data-dir": { type: "string" }, "database-url": { type: "string" } };
export const DATA_HELP = [
  ["--data-dir DIR", "the data directory, SQLite [./assay-data] (ASSAY_DATA_DIR)"],
  ["--database-url URL", "postgres://… instead of a data dir (ASSAY_DATABASE_URL)"],
] as const;

const snake = (name: string) => name.replaceAll("-", "_");

/** Node's messages quote the option as typed: `'--org <value>'`, `'-x'`. */
function optionIn(message: string): string {
  const m = /'(--?[^' ]+)/.exec(message);
  return m?.[1] ?? "an option";
}

/**
 * `--port -1` as `--port=-1`: parseArgs takes a value that starts with "-" for an option, so a
 * negative number was "--port needs a value", though one was given. Only after an option that
 * takes a value, and only a number: `--name -x` stays the mistake it is.
 */
const NEGATIVE = "\u0000";

function negativeValuesJoined(argv: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const long = arg.startsWith("--") && !arg.includes("=") ? options[arg.slice(2)] : undefined;
    if (long?.type === "string" && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else if (/^-\d/.test(arg)) {
      // A negative number where an argument stands (`settings set KEY -5`) is that argument, for
      // the command to judge, not an unknown option "-5". Marked here, restored in parseArgs.
      out.push(`${NEGATIVE}${arg}`);
    } else out.push(arg);
  }
  return out;
}

export function parseArgs(argv: string[], options: Options): Parsed {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseNodeArgs({
      args: negativeValuesJoined(argv, options),
      options,
      strict: true,
      allowPositionals: true,
    }) as { values: Record<string, string | boolean | undefined>; positionals: string[] });
  } catch (e) {
    const code = (e as { code?: string }).code;
    const message = (e as Error).message;
    const name = optionIn(message);
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION")
      throw new UsageError(`unknown option ${name}${didYouMean(name, Object.keys(options))}`);
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE")
      throw new UsageError(
        /does not take an argument/.test(message) ? `${name} takes no value` : `${name} needs a value`,
      );
    throw new UsageError(message);
  }
  const out: Parsed = {
    positionals: positionals.map((a) => (a.startsWith(NEGATIVE) ? a.slice(NEGATIVE.length) : a)),
    flags: {},
    bools: new Set(),
  };
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === "string") out.flags[snake(name)] = value;
    else if (value === true) out.bools.add(snake(name));
  }
  // `--data-dir "$DIR"` with DIR unset in a script: an empty value was taken for no option, and
  // the command went to ./assay-data (serve: even past ASSAY_DATA_DIR) without a word; an empty
  // --server sent `workflows export` to the data dir, which then refused "unknown option --server".
  for (const name of [...Object.keys(DATA_OPTIONS), "server", "token"])
    if (out.flags[snake(name)] === "") throw new UsageError(`--${name} needs a value, not an empty one`);
  return out;
}

/**
 * Refuses options the command accepts in general but this subcommand does not. A subcommand that
 * takes --data-dir also takes --database-url: where the data is, on either database.
 */
export function allowOnly(p: Parsed, flags: readonly string[]) {
  const known = flags.includes("data_dir") ? [...flags, "database_url"] : flags;
  for (const f of [...Object.keys(p.flags), ...p.bools]) {
    if (f !== "help" && !known.includes(f)) {
      const name = `--${f.replaceAll("_", "-")}`;
      throw new UsageError(
        `unknown option ${name}${didYouMean(
          name,
          known.map((k) => k.replaceAll("_", "-")),
        )}`,
      );
    }
  }
}

/**
 * ` (did you mean --name?)` for a mistyped option (`--nmae`), or "" when none is close: an
 * option of the command, said as typed. Short options (`-x`) are too short to guess from.
 */
function didYouMean(typed: string, longNames: readonly string[]): string {
  if (!typed.startsWith("--")) return "";
  const meant = nearest(typed.slice(2), longNames);
  return meant ? ` (did you mean --${meant}?)` : "";
}

/** A word that is not one of `words` (a subcommand, a role, a key): ` (did you mean "list"?)` or "". */
export function meant(typed: string, words: readonly string[]): string {
  const m = nearest(typed, words);
  return m ? ` (did you mean "${m}"?)` : "";
}

/**
 * The error for a missing or unknown subcommand: the usage alone when none was given, else the
 * word named first, with the subcommand it most likely meant (`users lst` → "list").
 */
export function unknownSubcommand(
  sub: string | undefined,
  subs: readonly string[],
  usage: string,
): UsageError {
  if (sub === undefined) return new UsageError(usage);
  return new UsageError(`unknown subcommand "${sub}"${meant(sub, subs)}\n${usage}`);
}

export async function readPasswordStdin(): Promise<string> {
  let bytes: Buffer;
  if (process.stdin.isTTY) {
    // A terminal: asked for, not echoed, ended by Enter (src/cli/password-tty.ts).
    const { readPasswordTty } = await import("./password-tty.ts");
    bytes = await readPasswordTty("Password (not shown): ");
  } else {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    bytes = Buffer.concat(chunks);
  }
  // Not read as "utf8": each byte that is not UTF-8 became U+FFFD, so a Latin-1 "ö" never matched
  // the web form's, and "ö" and "ü" were the same password.
  const text = utf8Text(bytes);
  if (text === null) throw new UsageError("the password on stdin is not UTF-8 text");
  return text.replace(/\r?\n$/, "");
}
