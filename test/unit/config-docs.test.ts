// The README's configuration table is what operators read: every setting `assay serve` takes
// (src/config.ts) must be a row with its variable, its flag and its default, and every row must
// name a setting the server reads. A setting added without its row, or a default changed in one
// place only, fails here with its name.
import { describe, expect, test } from "bun:test";
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
