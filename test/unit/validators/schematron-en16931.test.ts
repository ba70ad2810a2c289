// The published EN 16931 UBL Schematron (CEN/TC 434, XSLT 2 binding, vendored unmodified with its
// EUPL licence in test/fixtures/schematron/en16931/) on the official example invoices: the valid
// ones pass, and errors planted in example 1 give the expected BR-* ids at the right lines.
import { beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { getValidator } from "../../../src/validators/registry.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import type { CompiledValidator } from "../../../src/validators/types.ts";
import { en16931Config, en16931Example, EN16931_EXAMPLES } from "../../helpers/en16931.ts";
import { input } from "./helpers.ts";

let validate: CompiledValidator;
const def = getValidator("schematron");

beforeAll(async () => {
  await loadLibxml();
  if (!def) throw new Error("no schematron validator");
  validate = def.compile(en16931Config());
});

const findings = (xml: string) => validate(input(xml, "XML"), { maxFindings: 1000 }).findings;
const errors = (xml: string) => findings(xml).filter((f) => f.severity === "error");
const at = (xml: string, code: string) =>
  findings(xml)
    .filter((f) => f.code === code)
    .map((f) => ({ path: f.path, line: f.line, column: f.column, severity: f.severity }));

describe("schematron: EN 16931 UBL rules", () => {
  test("the schema with its includes passes the save-time check", () => {
    expect(def?.checkConfig(en16931Config())).toEqual([]);
  });

  test.each(readdirSync(EN16931_EXAMPLES).filter((f) => f.endsWith(".xml")))("%s has no error", (file) => {
    expect(errors(en16931Example(file))).toEqual([]);
  });

  const example1 = en16931Example("ubl-tc434-example1.xml");

  test("BR-03: no issue date, reported on the Invoice element", () => {
    const xml = example1.replace("<cbc:IssueDate>2015-01-09</cbc:IssueDate>", "");
    expect(at(xml, "schematron.BR-03")).toEqual([
      { path: "/Invoice", line: 7, column: 1, severity: "error" },
    ]);
    const [f] = findings(xml).filter((x) => x.code === "schematron.BR-03");
    expect(f.message).toBe("[BR-03]-An Invoice shall have an Invoice issue date (BT-2).");
  });

  test("BR-CO-10: the line total no longer matches the sum of the lines", () => {
    const xml = example1.replace(
      '<cbc:LineExtensionAmount currencyID="EUR">19.90</cbc:LineExtensionAmount>',
      '<cbc:LineExtensionAmount currencyID="EUR">29.90</cbc:LineExtensionAmount>',
    );
    expect(at(xml, "schematron.BR-CO-10")).toEqual([
      { path: "/Invoice/cac:LegalMonetaryTotal", line: 104, column: 5, severity: "error" },
    ]);
  });

  test("BR-CL-04: an unknown currency code, at the element", () => {
    const xml = example1.replace(
      "<cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>",
      "<cbc:DocumentCurrencyCode>EUX</cbc:DocumentCurrencyCode>",
    );
    expect(at(xml, "schematron.BR-CL-04")).toEqual([
      { path: "/Invoice/cbc:DocumentCurrencyCode", line: 21, column: 5, severity: "error" },
    ]);
  });

  test("BR-23: a line quantity without its unit code, on the third invoice line", () => {
    const lines = example1.split("\n");
    lines[153] = lines[153].replace(' unitCode="EA"', "");
    const xml = lines.join("\n");
    expect(at(xml, "schematron.BR-23")).toEqual([
      { path: "/Invoice/cac:InvoiceLine[3]", line: 152, column: 5, severity: "error" },
    ]);
  });
});
