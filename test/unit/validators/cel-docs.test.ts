// Every example in docs/cel.md is true: the page's tables whose last column is headed
// "… (true)" hold CEL expressions, run here as rules of one `assertions` step over the JSON
// document the page shows. An example that stops being true (or a typo in one) fails this test.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { run } from "./helpers.ts";

const page = readFileSync(new URL("../../../docs/cel.md", import.meta.url), "utf8");

function sample(): string {
  const m = /```json sample\n([\s\S]*?)```/.exec(page);
  if (!m) throw new Error("docs/cel.md has no ```json sample block");
  return m[1];
}

/** The last cell of each row of tables whose last header ends with "(true)". */
function examples(): string[] {
  const out: string[] = [];
  let inExamples = false;
  for (const line of page.split("\n")) {
    if (!line.startsWith("|")) {
      inExamples = false;
      continue;
    }
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim());
    const last = cells[cells.length - 1] ?? "";
    if (/\(true\)$/.test(last)) inExamples = true;
    else if (inExamples && !/^-+$/.test(last)) {
      const code = /^(`+)\s?([\s\S]*?)\s?\1$/.exec(last);
      if (!code) throw new Error(`not a code span: ${last}`);
      out.push(code[2].replace(/\\\|/g, "|"));
    }
  }
  return out;
}

test("every example in docs/cel.md is true over the page's sample document", () => {
  const rules = examples().map((expr, i) => ({ id: `example-${i}`, expr, message: expr }));
  expect(rules.length).toBeGreaterThan(60);
  const r = run("assertions", { rules }, sample(), "JSON");
  expect(r.findings.map((f) => `${f.code}: ${f.message}`)).toEqual([]);
});
