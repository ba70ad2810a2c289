// `assay validate --local` reads a file's charset as the server does (src/runs/intake/charsets.ts):
// us-ascii is 7-bit, iso-8859-1 byte for byte (not windows-1252), a bare utf-16 by its BOM.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalWorkflow, createLocal, loadLocalWorkflow } from "../../../src/cli/validate/local.ts";

let dir: string;
let w: LocalWorkflow;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "assay-local-charset-"));
  const file = join(dir, "w.yaml");
  writeFileSync(
    file,
    [
      "slug: texts",
      "name: Texts",
      "allowed_file_types: [TEXT, JSON]",
      "steps:",
      "  - name: syntax",
      "    validator: syntax",
      "    config: {}",
      "  - name: rules",
      "    validator: assertions",
      "    config:",
      "      rules:",
      "        - id: a",
      "          expr: 'type(data) != map || data.a == \"\\u0080\"'",
      "          message: a is {{data.a}}",
    ].join("\n"),
  );
  w = await loadLocalWorkflow(file);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (contentType: string, bytes: number[]) => ({
  label: "f",
  name: "f",
  contentType,
  bytes: new Uint8Array(bytes),
});

describe("validate --local charsets", () => {
  test("us-ascii: a byte over 0x7F is refused as the server refuses it", async () => {
    const r = await createLocal(w)(file("text/plain; charset=us-ascii", [0x63, 0x61, 0x66, 0xe9]));
    expect(r.run).toBeNull();
    expect(r.error).toEqual({
      status: 400,
      code: "invalid_request",
      detail: "The run request is invalid.",
      errors: [{ field: "charset", code: "invalid_encoding", message: "The content is not valid us-ascii." }],
    });
  });

  test("iso-8859-1: 0x80 is U+0080, not windows-1252's euro sign", async () => {
    const json = [...Buffer.from('{"a":"'), 0x80, ...Buffer.from('"}')];
    const r = await createLocal(w)(file("application/json; charset=iso-8859-1", json));
    expect(r.error).toBeNull();
    expect(r.run?.status).toBe("succeeded");
  });

  test("utf-16 with a big-endian BOM is read big-endian", async () => {
    const be = [0xfe, 0xff, ...[...'{"a":"\u0080"}'].flatMap((c) => [0, c.charCodeAt(0)])];
    const r = await createLocal(w)(file("application/json; charset=utf-16", be));
    expect(r.error).toBeNull();
    expect(r.run?.status).toBe("succeeded");
  });
});
