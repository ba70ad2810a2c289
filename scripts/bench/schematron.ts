// Measure 6: Schematron throughput. The EN 16931 UBL rules (vendored, test/fixtures/schematron/
// en16931/) on a ~100 KB UBL invoice: the official example 1 with its invoice lines repeated, so
// its totals no longer add up and it fails BR-CO-10 and friends, as a real broken invoice would.
// In this process, through the validator as a worker runs it (compiled once, then document after
// document); the baseline is libxml2's parse of the same bytes (what every XML validator does first).
import { en16931Config, en16931Example } from "../../test/helpers/en16931.ts";
import { getValidator } from "../../src/validators/registry.ts";
import { loadLibxml } from "../../src/validators/shared/libxml.ts";
import { parseXml } from "../../src/validators/shared/xml.ts";

export interface SchematronResult {
  bytes: number;
  findings: number;
  compileMs: number;
  docsPerSec: number;
  msPerDoc: number;
  parseDocsPerSec: number;
}

/** Example 1 with its lines repeated until the document reaches `bytes`. */
export function largeInvoice(bytes: number): string {
  const xml = en16931Example("ubl-tc434-example1.xml");
  const first = xml.indexOf("<cac:InvoiceLine>");
  const end = xml.lastIndexOf("</cac:InvoiceLine>") + "</cac:InvoiceLine>".length;
  const lines = xml.slice(first, end);
  const copies = Math.max(1, Math.ceil((bytes - xml.length) / lines.length));
  return xml.slice(0, end) + `\n    ${lines}`.repeat(copies) + xml.slice(end);
}

export async function measureSchematron(opts: { bytes: number; docs: number }): Promise<SchematronResult> {
  await loadLibxml();
  const def = getValidator("schematron");
  if (!def) throw new Error("no schematron validator");
  const text = largeInvoice(opts.bytes);
  const input = { bytes: new TextEncoder().encode(text), text, fileType: "XML" as const, filename: null };
  let t = performance.now();
  const validate = def.compile(en16931Config());
  const first = validate(input, { maxFindings: 1000 });
  const compileMs = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < opts.docs; i++) validate(input, { maxFindings: 1000 });
  const seconds = (performance.now() - t) / 1000;
  const parses = opts.docs * 20;
  t = performance.now();
  for (let i = 0; i < parses; i++) {
    const p = parseXml(input.bytes);
    if ("doc" in p) p.doc.dispose();
  }
  const parseSeconds = (performance.now() - t) / 1000;
  return {
    bytes: input.bytes.byteLength,
    findings: first.findings.length,
    compileMs,
    docsPerSec: opts.docs / seconds,
    msPerDoc: (seconds * 1000) / opts.docs,
    parseDocsPerSec: parses / parseSeconds,
  };
}
