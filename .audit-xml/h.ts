import { loadLibxml } from "../src/validators/shared/libxml.ts";
await loadLibxml();
import { xmlSchemaValidator } from "../src/validators/xml-schema/index.ts";
import { schematronValidator } from "../src/validators/schematron/index.ts";
import { syntaxValidator } from "../src/validators/syntax/index.ts";
export function run(kind: "xsd"|"relaxng"|"dtd"|"sch"|"syntax", schema: string | object, xml: string | Uint8Array, extra: any = {}) {
  const bytes = typeof xml === "string" ? new TextEncoder().encode(xml) : xml;
  const text = typeof xml === "string" ? xml : new TextDecoder().decode(xml);
  const input = { bytes, text, fileType: "XML", filename: null } as any;
  let v: any, cfg: any;
  if (kind === "sch") { v = schematronValidator; cfg = { schema, ...extra }; }
  else if (kind === "syntax") { v = syntaxValidator; cfg = {}; }
  else { v = xmlSchemaValidator; cfg = { schema_type: kind, schema }; }
  const issues = v.checkConfig(cfg);
  if (issues.length) { console.log("CONFIG ISSUES", JSON.stringify(issues)); return; }
  const r = v.compile(cfg)(input, { maxFindings: 100 });
  for (const f of r.findings) console.log(JSON.stringify({c: f.code, s: f.severity, m: f.message, p: f.path, l: f.line, col: f.column, r: f.rule}));
  if (!r.findings.length) console.log("(no findings)");
  if (r.error) console.log("ERROR", r.error);
}
