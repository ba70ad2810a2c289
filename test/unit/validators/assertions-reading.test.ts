// What an assertions rule reads of a CSV header and of XML text (data.ts, xml-lists.ts).
import { beforeAll, describe, expect, test } from "bun:test";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { run } from "./helpers.ts";

// The XML engine is loaded on demand (src/validators/shared/libxml.ts), as a worker does.
beforeAll(() => loadLibxml());

describe("CSV: a repeated header label", () => {
  test("is an error on the repeated label; rules still run, reading the last such column", () => {
    const rules = [{ id: "qty", expr: "row.qty == '2'", message: "qty {{ row.qty }}" }];
    const r = run("assertions", { rules }, "sku,qty,qty\nA,1,2\nB,3,4\n", "CSV");
    expect(r.findings).toEqual([
      {
        severity: "error",
        code: "csv.duplicate_label",
        message: 'label "qty" repeats column 2 (rules read column 3\'s value under "qty")',
        path: "/rows/1/qty",
        line: 1,
        column: 9,
        rule: null,
      },
      {
        severity: "error",
        code: "assertion.failed",
        message: "qty 4",
        path: "/rows/3",
        line: 3,
        column: 1,
        rule: "qty",
      },
    ]);
  });
});

describe("XML: text as written", () => {
  const rule = (expr: string) => [{ id: "t", expr, message: "{{ data }}" }];
  const messages = (expr: string, xml: string) =>
    run("assertions", { rules: rule(expr) }, xml, "XML").findings.map((f) => f.message);

  test("an element's text keeps its spaces (was: trimmed)", () => {
    expect(
      messages(
        "data.r.txt == '  x  ' && data.r.at['#text'] == ' y '",
        "<r><txt>  x  </txt><at k='v'> y </at></r>",
      ),
    ).toEqual([]);
  });

  test("indentation between elements is not text; mixed content keeps its spaces", () => {
    const xml = "<r>\n  <a>1</a>\n  <m>a <b>b</b> c</m>\n</r>\n";
    expect(messages("false", xml)).toEqual(['{"r": {"a": "1", "m": {"b": "b", "#text": "a  c"}}}']);
  });
});
