// libxml2 reads only what Assay serves it (src/validators/shared/libxml.ts). Any other load
// used to fall through to libxml2's own file loader over the wasm file system, whose /dev/stdin
// is the process's standard input: a RelaxNG externalRef that slipped past the save-time check
// read the server's stdin (and hung the save while stdin stayed open). A child process gets a
// valid grammar on its stdin; the schema that names /dev/stdin must not compile with it.
import { beforeAll, describe, expect, test } from "bun:test";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";

beforeAll(() => loadLibxml());

const RNG = "http://relaxng.org/ns/structure/1.0";
const GRAMMAR_ON_STDIN = `<element name="a" xmlns="${RNG}"><text/></element>`;
const CHILD = `
import { loadLibxml } from ${JSON.stringify(new URL("../../../src/validators/shared/libxml.ts", import.meta.url).pathname)};
import { compileSchema } from ${JSON.stringify(new URL("../../../src/validators/xml-schema/compile.ts", import.meta.url).pathname)};
await loadLibxml();
const [type, schema] = JSON.parse(process.argv.at(-1));
try { compileSchema({ type, schema }).dispose(); console.log("compiled"); }
catch (e) { console.log("refused: " + e.message); }
`;

/** Compiles `schema` in a child process whose stdin holds a valid RelaxNG grammar. */
function compileWithStdin(type: string, schema: string): string {
  const r = Bun.spawnSync([process.execPath, "-e", CHILD, JSON.stringify([type, schema])], {
    stdin: new TextEncoder().encode(GRAMMAR_ON_STDIN),
    stderr: "pipe",
  });
  return r.stdout.toString().trim();
}

describe("libxml2 loads nothing it is not served", () => {
  test("a RelaxNG externalRef to /dev/stdin does not read the process's stdin", () => {
    const schema = `<grammar xmlns="${RNG}"><start><externalRef href="file:///dev/stdin"/></start></grammar>`;
    const out = compileWithStdin("relaxng", schema);
    expect(out).toStartWith("refused: ");
    expect(out).toContain("could not load file:///dev/stdin");
  });
});

describe("external references are found however they are written", () => {
  const issues = (schema_type: string, schema: string) =>
    checkStepConfig("xml_schema", { schema_type, schema });
  const refused = (schema_type: string, schema: string, what: string) =>
    expect(issues(schema_type, schema)).toEqual([
      {
        field: "schema",
        code: "external_reference",
        message: `has an ${what}; external documents are never loaded, inline them`,
      },
    ]);
  test("an attribute holding '>' before href", () => {
    refused(
      "relaxng",
      `<grammar xmlns="${RNG}" xmlns:f="urn:f"><start><externalRef f:x=">" href="file:///dev/stdin"/></start></grammar>`,
      'externalRef of "file:///dev/stdin"',
    );
  });
  test("a non-ASCII prefix, and include as well as externalRef", () => {
    refused(
      "relaxng",
      `<é:grammar xmlns:é="${RNG}"><é:include href="other.rng"/><é:start><é:empty/></é:start></é:grammar>`,
      'include of "other.rng"',
    );
  });
  test("a DTD parameter entity with a non-ASCII name", () => {
    refused("dtd", '<!ENTITY % é SYSTEM "x.dtd"> %é;', 'SYSTEM of "x.dtd"');
  });
  test("an element of another namespace named externalRef is not a reference", () => {
    const schema = `<grammar xmlns="${RNG}" xmlns:o="urn:o"><start><element name="a"><o:externalRef href="x"/><text/></element></start></grammar>`;
    expect(issues("relaxng", schema)).toEqual([]);
  });
});
