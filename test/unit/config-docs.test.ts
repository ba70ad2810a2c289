// The README's configuration table is what operators read: every setting `assay serve` takes
// (src/config.ts) must be a row with its variable, its flag and its default, and every row must
// name a setting the server reads. A setting added without its row, or a default changed in one
// place only, fails here with its name.
import { describe, expect, test } from "bun:test";
import { COMMANDS, optionsOf } from "../../src/cli/help.ts";
import { SETTINGS, envName, flagName } from "../../src/config.ts";

interface Row {
  flag: string;
  def: string;
}

/** The table's rows by variable: `| `ASSAY_X` | `--x` | `default` | what it does |`. */
async function readmeRows(): Promise<Map<string, Row>> {
  const text = await Bun.file(new URL("../../README.md", import.meta.url)).text();
  const rows = new Map<string, Row>();
  for (const line of text.split("\n")) {
    const cells = line.split(" | ");
    const env = /^\| `(ASSAY_[A-Z0-9_]+)`$/.exec(cells[0] ?? "")?.[1];
    if (!env || cells.length < 4) continue;
    const unquote = (c: string) => c.trim().replace(/^`|`$/g, "");
    rows.set(env, { flag: unquote(cells[1]!), def: unquote(cells[2]!) });
  }
  return rows;
}

/** How the README writes a default: a dash when there is none, else the value as it is. */
const shown = (def: string | number | boolean | null) => (def === null ? "—" : String(def));

/** Defaults the table words for people instead of printing the raw value. */
const WORDED: Record<string, string> = { node_id: "host name + random suffix" };

describe("README configuration table", () => {
  test("every setting is a row with its flag and default", async () => {
    const rows = await readmeRows();
    const wrong = SETTINGS.flatMap((s) => {
      const row = rows.get(envName(s.key));
      if (!row) return [`${envName(s.key)}: no row`];
      const want = { flag: flagName(s.key), def: WORDED[s.key] ?? shown(s.def) };
      return row.flag === want.flag && row.def === want.def
        ? []
        : [`${envName(s.key)}: README says ${JSON.stringify(row)}, the server ${JSON.stringify(want)}`];
    });
    expect(wrong).toEqual([]);
  });

  test("every row names a setting the server reads", async () => {
    const known = new Set(SETTINGS.map((s) => envName(s.key)));
    const unknown = [...(await readmeRows()).keys()].filter((env) => !known.has(env));
    expect(unknown).toEqual([]);
  });
});

/**
 * The README's CLI table, by command: the subcommands and flags its first cell names
 * (`| `assay users create USERNAME [--admin]` · `users list` … | what it does |`).
 */
async function readmeCommands(): Promise<Map<string, { subcommands: Set<string>; flags: Set<string> }>> {
  const text = await Bun.file(new URL("../../README.md", import.meta.url)).text();
  const rows = new Map<string, { subcommands: Set<string>; flags: Set<string> }>();
  for (const line of text.split("\n")) {
    const cell = /^\| (`assay [^|]*(?:\\\|[^|]*)*) \| /.exec(line)?.[1];
    if (!cell) continue;
    const command = /^`assay ([a-z]+)/.exec(cell)![1]!;
    const subcommands = new Set<string>();
    for (const [, name, forms] of cell.matchAll(/`(?:assay )?([a-z]+) ([a-z][a-z-]*(?:\\\|[a-z][a-z-]*)*)/g))
      if (name === command) for (const f of forms!.split("\\|")) subcommands.add(f);
    const flags = new Set([...cell.matchAll(/--([a-z-]+)/g)].map((m) => m[1]!));
    rows.set(command, { subcommands, flags });
  }
  return rows;
}

/** A command's subcommands as its help's usage lines name them (`assay users create …` → create). */
const subcommandsOf = (command: string) =>
  new Set(
    COMMANDS[command]!.usage.flatMap((u) =>
      [...u.matchAll(new RegExp(`(?:assay ${command} |\\| )([a-z][a-z-]*)`, "g"))].map((m) => m[1]!),
    ),
  );

describe("README CLI table", () => {
  test("every command of `assay --help` is a row naming each of its subcommands", async () => {
    const rows = await readmeCommands();
    const wrong = Object.keys(COMMANDS).flatMap((command) => {
      const row = rows.get(command);
      if (!row) return [`${command}: no row`];
      const missing = [...subcommandsOf(command)].filter((sub) => !row.subcommands.has(sub));
      return missing.length ? [`${command}: README names no ${missing.join(", ")}`] : [];
    });
    expect(wrong).toEqual([]);
  });

  test("every row names a command, subcommands and flags the CLI takes", async () => {
    const wrong = [...(await readmeCommands())].flatMap(([command, row]) => {
      if (!COMMANDS[command]) return [`${command}: no such command`];
      const subs = subcommandsOf(command);
      const options = optionsOf(command);
      return [
        ...[...row.subcommands]
          .filter((sub) => subs.size && !subs.has(sub))
          .map((sub) => `${command} ${sub}`),
        ...[...row.flags].filter((f) => !(f in options)).map((f) => `${command} --${f}`),
      ];
    });
    expect(wrong).toEqual([]);
  });
});
