// Checks reports against their published schemas with the engines Assay itself validates with:
// SARIF with the json_schema validator (typebox), JUnit XML with the xml_schema validator
// (libxml2-wasm XSD). Each returns the findings as `line:column message` strings; [] is valid.
import { join } from "node:path";
import { getValidator } from "../../../src/validators/registry.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import type { CompiledValidator, FileType } from "../../../src/validators/types.ts";

const dir = join(import.meta.dir, "../../fixtures/schemas");

function checker(slug: string, config: unknown, fileType: FileType) {
  const v = getValidator(slug)!;
  const issues = v.checkConfig(config);
  if (issues.length) throw new Error(`the ${slug} test schema is refused: ${JSON.stringify(issues)}`);
  const run: CompiledValidator = v.compile(config);
  return (text: string) =>
    run(
      { bytes: new TextEncoder().encode(text), text, fileType, filename: null },
      { maxFindings: 100 },
    ).findings.map((f) => `${f.line}:${f.column} ${f.path ?? ""} ${f.message}`);
}

let sarif: ((text: string) => string[]) | undefined;
export async function sarifProblems(text: string): Promise<string[]> {
  if (!sarif) {
    // The OASIS schema as published (errata01): its language pattern is the corrected one.
    const schema = JSON.parse(await Bun.file(join(dir, "sarif-schema-2.1.0.json")).text());
    sarif = checker("json_schema", { schema }, "JSON");
  }
  return sarif(text);
}

let junit: ((text: string) => string[])[] | undefined;
/**
 * Against two schemas: Jenkins' own (the xunit plugin's junit-10.xsd, unchanged: what Jenkins
 * checks a report with) and ours, which is stricter on values (integer counts, decimal times, an
 * ISO 8601 timestamp). A problem of Jenkins' schema starts with "jenkins: ".
 */
export async function junitProblems(xml: string): Promise<string[]> {
  if (!junit) {
    await loadLibxml();
    junit = await Promise.all(
      ["junit.xsd", "jenkins-junit-10.xsd"].map(async (f) =>
        checker("xml_schema", { schema_type: "xsd", schema: await Bun.file(join(dir, f)).text() }, "XML"),
      ),
    );
  }
  const [ours, jenkins] = junit;
  return [...ours!(xml), ...jenkins!(xml).map((p) => `jenkins: ${p}`)];
}
