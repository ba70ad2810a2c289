// A small argv parser: positionals, `--flag value`, `--flag=value`, and declared booleans.
export interface Parsed {
  positionals: string[];
  flags: Record<string, string>;
  bools: Set<string>;
}

export class UsageError extends Error {}

export function parseArgs(argv: string[], booleans: readonly string[] = []): Parsed {
  const out: Parsed = { positionals: [], flags: {}, bools: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith("--") || a === "-") {
      out.positionals.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = (eq > 0 ? a.slice(2, eq) : a.slice(2)).replaceAll("-", "_");
    if (booleans.includes(name)) {
      if (eq > 0) throw new UsageError(`--${name.replaceAll("_", "-")} takes no value`);
      out.bools.add(name);
    } else if (eq > 0) out.flags[name] = a.slice(eq + 1);
    else {
      const v = argv[i + 1];
      if (v === undefined || v.startsWith("--"))
        throw new UsageError(`--${name.replaceAll("_", "-")} needs a value`);
      out.flags[name] = v;
      i++;
    }
  }
  return out;
}

/**
 * Reject flags a command does not know, so typos are not silently ignored. A command that takes
 * --data-dir also takes --database-url: where the data is, on either database.
 */
export function allowOnly(p: Parsed, flags: readonly string[]) {
  const known = flags.includes("data_dir") ? [...flags, "database_url"] : flags;
  for (const f of [...Object.keys(p.flags), ...p.bools]) {
    if (!known.includes(f)) throw new UsageError(`unknown option --${f.replaceAll("_", "-")}`);
  }
}

export async function readPasswordStdin(): Promise<string> {
  const text = await Bun.stdin.text();
  return text.replace(/\r?\n$/, "");
}
