// Every command's help is complete: each option the parser accepts is in the help, and nothing
// in the help is refused by the parser. Every command that opens a data dir says --data-dir.
import { describe, expect, test } from "bun:test";
import { DATA_OPTIONS, UsageError, parseArgs } from "../../../src/cli/args.ts";
import { COMMANDS, columns, commandHelp, optionsOf } from "../../../src/cli/help.ts";

describe("help", () => {
  for (const [name, spec] of Object.entries(COMMANDS))
    test(`${name}: every option is in its help and its help names no other`, () => {
      const help = commandHelp(name);
      const documented = [...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!.slice(2));
      expect(documented.sort()).toEqual(Object.keys(spec.options).sort());
      expect(help).toContain("-h, --help");
    });

  test("the commands on a data dir take --data-dir and say so", () => {
    for (const name of ["init", "users", "orgs", "members", "tokens", "settings", "workflows", "backup"]) {
      expect(Object.keys(COMMANDS[name]!.options)).toEqual(expect.arrayContaining(Object.keys(DATA_OPTIONS)));
      expect(commandHelp(name)).toContain("--data-dir DIR");
    }
  });

  test("columns stay aligned and within 100 characters, long names on a line of their own", () => {
    const text = columns([
      ["--short", "one"],
      ["--a-very-long-option-name-indeed VALUE", `${"word ".repeat(40)}end`],
    ]);
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(100);
    expect(text.split("\n")[1]).toBe("  --a-very-long-option-name-indeed VALUE");
    expect(
      commandHelp("serve")
        .split("\n")
        .every((l) => l.length <= 100),
    ).toBe(true);
  });
});

describe("parsing (node:util parseArgs, one wording)", () => {
  const users = optionsOf("users");
  test("flags, booleans, positionals and -h", () => {
    expect(parseArgs(["create", "bob", "--admin", "--name=Bob", "--data-dir", "d", "-h"], users)).toEqual({
      positionals: ["create", "bob"],
      flags: { name: "Bob", data_dir: "d" },
      bools: new Set(["admin", "help"]),
    });
  });
  test.each([
    [["--colour", "red"], "unknown option --colour"],
    [["--name"], "--name needs a value"],
    [["--name", "--admin"], "--name needs a value"],
    [["--admin=yes"], "--admin takes no value"],
    [["-x"], "unknown option -x"],
    [["--name", "-x"], "--name needs a value"],
  ])("%p → %s", (argv, message) => {
    expect(() => parseArgs(argv, users)).toThrow(new UsageError(message));
  });
  test("a negative number is a value, for the option's own check to judge", () => {
    const serve = optionsOf("serve");
    expect(parseArgs(["--port", "-1"], serve).flags).toEqual({ port: "-1" });
    expect(parseArgs(["--port", "-1.5", "--host", "::1"], serve).flags).toEqual({
      port: "-1.5",
      host: "::1",
    });
  });
});
