// A workflow file (assay workflows import/apply, validate --local) is read without the YAML
// library talking to the process: what is wrong with it is said in the command's own error.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { DocumentError, parseDocument } from "../../../src/workflows/document.ts";

let warnings: string[] = [];
const listen = (w: Error) => warnings.push(w.message);
beforeEach(() => {
  warnings = [];
  process.on("warning", listen);
});
afterEach(() => {
  process.off("warning", listen);
});

test("a key that is a sequence emits no process warning; the document is refused for it", async () => {
  // yaml's default logLevel "warn" printed "(node:…) Warning: Keys with collection values will be
  // stringified …" on the CLI's stderr before its own error.
  const text = "slug: x\nname: X\nallowed_file_types: [JSON]\n? [a, b]\n: 1\n";
  expect(() => parseDocument(text)).toThrow(DocumentError);
  // emitWarning delivers its event on a later turn.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect(warnings).toEqual([]);
});
