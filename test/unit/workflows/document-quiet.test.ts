// A workflow file (assay workflows import/apply, validate --local) is read without the YAML
// library talking to the process: what is wrong with it is said in the command's own error.
import { expect, test } from "bun:test";
import { collectWarnings } from "../../helpers/warnings.ts";
import { DocumentError, parseDocument } from "../../../src/workflows/document.ts";

const warnings = collectWarnings();

test("a key that is a sequence emits no process warning; the document is refused for it", async () => {
  // yaml's default logLevel "warn" printed "(node:…) Warning: Keys with collection values will be
  // stringified …" on the CLI's stderr before its own error.
  const text = "slug: x\nname: X\nallowed_file_types: [JSON]\n? [a, b]\n: 1\n";
  expect(() => parseDocument(text)).toThrow(DocumentError);
  await warnings.settled();
  expect(warnings.messages).toEqual([]);
});
