// A CSV header that differs from the schema's field name only by Unicode normalization ("café"
// typed as c a f e U+0301 against the schema's U+00E9) is still an incorrect label: Table Schema
// compares labels as written (docs/decisions.md, "Unicode"). The message now says why two labels
// that print alike differ; it read `column 1 is "café" but the schema expects "café"`.
import { expect, test } from "bun:test";
import { run } from "./helpers.ts";

const config = { schema: { fields: [{ name: "caf\u00e9" }, { name: "n" }] } };

test("the message names the normalization", () => {
  const r = run("csv_table", config, "cafe\u0301,n\nx,1\n", "CSV");
  expect(r.findings.map((f) => [f.code, f.message, f.line, f.column])).toEqual([
    [
      "csv.incorrect_label",
      'column 1 is "cafe\u0301" but the schema expects "caf\u00e9" (the same letters in another Unicode normalization form: labels are compared character by character)',
      1,
      1,
    ],
  ]);
});

test("the same label in the same form passes", () => {
  expect(run("csv_table", config, "caf\u00e9,n\nx,1\n", "CSV").findings).toEqual([]);
});
