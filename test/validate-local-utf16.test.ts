// `assay validate --local` reads a file as the server does (docs/api.md "Charsets"): a YAML, CSV
// or text file that starts with a UTF-16 byte order mark is UTF-16 (it was refused locally, "not
// valid utf-8", while the server validated it); a UTF-16 JSON file is still refused, as the
// server refuses it without a charset.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAssay } from "./helpers/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "assay-validate-utf16-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const utf16le = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
writeFileSync(
  join(dir, "w.yaml"),
  "slug: y\nname: Y\nallowed_file_types: [YAML, JSON, CSV]\nsteps:\n  - name: syntax\n    validator: syntax\n    config: {}\n",
);
writeFileSync(join(dir, "d.yaml"), utf16le('a: "é😀"\nb: [1, 2]\n'));
writeFileSync(join(dir, "t.csv"), utf16le("a,b\r\né,😀\r\n"));
writeFileSync(join(dir, "d.json"), utf16le('{"a": 1}'));

test("UTF-16 YAML and CSV with their BOM pass; UTF-16 JSON is refused as on the server", async () => {
  const r = await runAssay(
    ["validate", "--local", "--workflow-file", "w.yaml", "d.yaml", "t.csv", "d.json"],
    {
      cwd: dir,
    },
  );
  expect([r.code, r.out]).toEqual([
    2,
    "PASS d.yaml: succeeded (no findings)\nPASS t.csv: succeeded (no findings)\nERROR d.json: 400 invalid_request: The run request is invalid. [charset: The content is not valid utf-8.]\n3 files: 2 passed, 0 failed, 1 error.\n",
  ]);
});
