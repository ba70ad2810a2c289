// Statements bind LIMIT, OFFSET and the parameters of joins through CAST(? AS …). A bare `?`
// there makes this SQLite re-prepare the statement on every execution (LIMIT reads the bound
// value; a join's constant propagation keys on it): GET /users/me/ spent 143 µs of CPU where it
// now spends 30, a page of runs listed per workflow 10–20 µs per statement (docs/benchmarks.md).
// A timing test would be flaky, so the rule is checked on the source: every SQL text literal.
import { expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const SRC = join(import.meta.dir, "../../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** String and template literals that look like SQL, with their file and line. */
function sqlLiterals(): { where: string; text: string }[] {
  const out: { where: string; text: string }[] = [];
  for (const file of sourceFiles(SRC)) {
    const code = readFileSync(file, "utf8");
    for (const m of code.matchAll(/"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g)) {
      if (!/\b(SELECT|UPDATE|DELETE|INSERT|FROM|WHERE)\b/.test(m[0])) continue;
      const line = code.slice(0, m.index).split("\n").length;
      out.push({ where: `${file.slice(SRC.length + 1)}:${line}`, text: m[0] });
    }
  }
  return out;
}

/** `?` placeholders not written as CAST(? AS …). */
const bare = (sql: string) => (sql.replace(/CAST\(\?\s+AS\s+\w+\)/gi, "").match(/\?/g) ?? []).length;

test("the scan finds the statements it checks", () => {
  const all = sqlLiterals();
  expect(all.length).toBeGreaterThan(100);
  expect(all.some((l) => /LIMIT CAST\(\? AS INTEGER\)/.test(l.text))).toBe(true);
  expect(all.some((l) => /\bJOIN\b/.test(l.text))).toBe(true);
  expect(bare("SELECT 1 LIMIT ?")).toBe(1);
  expect(bare("SELECT 1 LIMIT CAST(? AS INTEGER) OFFSET CAST(?  AS INTEGER)")).toBe(0);
});

test("LIMIT and OFFSET are never a bare parameter", () => {
  const offenders = sqlLiterals()
    .filter((l) => /\b(LIMIT|OFFSET)\s+\?/i.test(l.text))
    .map((l) => l.where);
  expect(offenders).toEqual([]);
});

test("a statement with a join binds every parameter through CAST", () => {
  const offenders = sqlLiterals()
    .filter((l) => /\bJOIN\b/.test(l.text) && bare(l.text) > 0)
    .map((l) => l.where);
  expect(offenders).toEqual([]);
});
