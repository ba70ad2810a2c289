// The EN 16931 artefacts' own unit tests (VEFA testSet files, vendored in
// test/fixtures/schematron/en16931/unit/) through the schematron validator: each <test> holds an
// invoice or credit note and the rule ids that must pass (<success>) or fire (<error>,
// <warning>, with a count when given). All 1131 cases passed on 2026-11-24 (docs/conformance.md);
// they take minutes, so by default every 8th case runs, and ASSAY_EN16931_FULL=1 runs them all.
import { beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sync } from "slimdom-sax-parser";
import { getValidator } from "../../src/validators/registry.ts";
import { loadLibxml } from "../../src/validators/shared/libxml.ts";
import type { CompiledValidator } from "../../src/validators/types.ts";
import { EN16931_UNIT, en16931Config } from "../helpers/en16931.ts";
import { input } from "../unit/validators/helpers.ts";

interface Case {
  name: string;
  xml: string;
  expect: { kind: string; id: string; count: number | null }[];
}

type El = {
  localName: string;
  textContent: string | null;
  children: ArrayLike<El>;
  getAttribute(n: string): string | null;
};

function cases(): Case[] {
  const out: Case[] = [];
  for (const dir of ["Invoice-unit-UBL", "CreditNote-unit-UBL"]) {
    for (const file of readdirSync(join(EN16931_UNIT, dir)).sort()) {
      const text = readFileSync(join(EN16931_UNIT, dir, file), "utf8");
      const doc = sync(text, { position: true });
      const tests = Array.from((doc.documentElement as unknown as El).children).filter(
        (e) => e.localName === "test",
      );
      tests.forEach((t, i) => {
        const kids = Array.from(t.children);
        const assert = kids.find((k) => k.localName === "assert");
        const body = kids.find((k) => k.localName !== "assert") as unknown as {
          position: { start: number };
        } & El;
        const expect = Array.from(assert?.children ?? [])
          .filter((a) => ["success", "error", "warning"].includes(a.localName))
          .map((a) => ({
            kind: a.localName,
            id: (a.textContent ?? "").trim(),
            count: a.getAttribute("number") ? Number(a.getAttribute("number")) : null,
          }));
        // The document is the test's element as written (its namespaces are declared on it).
        const start = body.position.start;
        const end = text.indexOf(`</${body.localName}>`, start) + body.localName.length + 3;
        out.push({ name: `${dir}/${file} #${i + 1}`, xml: text.slice(start, end), expect });
      });
    }
  }
  return out;
}

const ALL = cases();
const FULL = process.env.ASSAY_EN16931_FULL === "1";
const RUN = FULL ? ALL : ALL.filter((_, i) => i % 8 === 0);

let validate: CompiledValidator;
beforeAll(async () => {
  await loadLibxml();
  validate = (getValidator("schematron") ?? ({} as never)).compile(en16931Config());
});

describe(`schematron: EN 16931 unit tests (${RUN.length} of ${ALL.length})`, () => {
  test("the vendored suite has its 1131 cases", () => {
    expect(ALL).toHaveLength(1131);
  });

  test.each(RUN.map((c) => [c.name, c] as const))("%s", (_, c) => {
    const fired = validate(input(c.xml, "XML"), { maxFindings: 10_000 }).findings;
    for (const e of c.expect) {
      const n = fired.filter((f) => f.code === `schematron.${e.id}`).length;
      if (e.kind === "success") expect({ id: e.id, fired: n }).toEqual({ id: e.id, fired: 0 });
      else if (e.count !== null) expect({ id: e.id, fired: n }).toEqual({ id: e.id, fired: e.count });
      else expect({ id: e.id, fired: n > 0 }).toEqual({ id: e.id, fired: true });
    }
  });
});
