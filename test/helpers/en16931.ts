// The vendored EN 16931 UBL Schematron (test/fixtures/schematron/en16931/README.md) as a step
// config: the main schema inline, the files it includes by their href.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const EN16931 = fileURLToPath(new URL("../fixtures/schematron/en16931/", import.meta.url));
const SCHEMATRON = join(EN16931, "schematron");
export const EN16931_EXAMPLES = join(EN16931, "examples");
export const EN16931_UNIT = join(EN16931, "unit");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

export function en16931Config(): { schema: string; includes: Record<string, string> } {
  const includes: Record<string, string> = {};
  for (const f of files(SCHEMATRON)) {
    const href = relative(SCHEMATRON, f);
    if (href !== "EN16931-UBL-validation.sch") includes[href] = readFileSync(f, "utf8");
  }
  return { schema: readFileSync(join(SCHEMATRON, "EN16931-UBL-validation.sch"), "utf8"), includes };
}

export function en16931Example(name: string): string {
  return readFileSync(join(EN16931_EXAMPLES, name), "utf8");
}
