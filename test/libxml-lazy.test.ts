// libxml2-wasm adds ~34 MiB of wasm memory to the thread that imports it: the server's main
// thread never loads it (an xml_schema step's save-time check compiles on the workflow check
// thread: src/workflows/check-thread.ts), a worker only for a validator that may parse XML
// (src/validators/shared/libxml.ts). Each case runs in a fresh process, as this one has loaded it
// already for other tests.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

async function runScript(args: string[]): Promise<unknown> {
  const p = Bun.spawn([process.execPath, ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  if (code !== 0) throw new Error(`exit ${code}: ${err}`);
  return JSON.parse(out.trim().split("\n").pop()!);
}

/** Well under the 34 MiB the wasm adds, well over what the server holds without it (~4 MiB). */
const WITHOUT_LIBXML_MIB = 16;

describe("libxml2 on the main thread", () => {
  test("a server does not load it: not at start, at saves (xml_schema steps' and stored XSDs' too) or XML runs", async () => {
    const r = (await runScript([join(ROOT, "test/fixtures/libxml-probe.ts")])) as Record<
      string,
      { loaded: boolean; extraMiB: number; runStatus?: string }
    > & { accessorError: string; badXmlSchemaSave: unknown; storedXsdSaves: number[] };
    expect(r.accessorError).toBe("libxml2 is not loaded: await loadLibxml() first");
    for (const at of [
      "afterStart",
      "afterOtherSave",
      "afterXmlRun",
      "afterXmlSchemaSave",
      "afterStoredXsd",
    ]) {
      expect({ at, loaded: r[at].loaded }).toEqual({ at, loaded: false });
      expect(r[at].extraMiB).toBeLessThan(WITHOUT_LIBXML_MIB);
    }
    expect(r.afterXmlRun.runStatus).toBe("succeeded");
    // The save was checked: a bad XSD is refused, from the check thread.
    expect(r.badXmlSchemaSave).toEqual({ status: 400, code: "invalid_schema" });
    // A stored XSD, and a step importing it, were checked, found and walked on the check thread.
    expect(r.storedXsdSaves).toEqual([201, 201]);
  }, 60_000);
});

describe("libxml2 in a worker's loader", () => {
  test("loaded with syntax, xml_schema or assertions; not with json_schema, csv_table or text_rules", async () => {
    const script = `
      import { loadValidator } from "./src/validators/loader.ts";
      import { libxmlLoaded } from "./src/validators/shared/libxml.ts";
      const slug = process.argv.at(-1);
      await loadValidator(slug);
      console.log(JSON.stringify(libxmlLoaded()));
    `;
    const loads: Record<string, unknown> = {};
    for (const slug of ["json_schema", "csv_table", "text_rules", "syntax", "xml_schema", "assertions"])
      loads[slug] = await runScript(["-e", script, slug]);
    expect(loads).toEqual({
      json_schema: false,
      csv_table: false,
      text_rules: false,
      syntax: true,
      xml_schema: true,
      assertions: true,
    });
  }, 60_000);
});
