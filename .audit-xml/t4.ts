import { run } from "./h.ts";
const X = (b: string, extra = '') => `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" ${extra}>${b}</xs:schema>`;
const typ = (t: string) => X(`<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="v" maxOccurs="unbounded">${t}</xs:element></xs:sequence></xs:complexType></xs:element>`);
const cases: [string, string, string[]][] = [
  ["totalDigits 3 (valid: 0012.300, 12.3, -1.23; invalid 1234, 1.234)", `<xs:simpleType><xs:restriction base="xs:decimal"><xs:totalDigits value="3"/></xs:restriction></xs:simpleType>`, ["0012.300","12.3","-1.23","1234","1.234"]],
  ["fractionDigits 1 (valid 1.50, 2.0; invalid 1.55)", `<xs:simpleType><xs:restriction base="xs:decimal"><xs:fractionDigits value="1"/></xs:restriction></xs:simpleType>`, ["1.50","2.0","1.55"]],
  ["pattern \\d{2} anchored (valid 12; invalid 123, a12)", `<xs:simpleType><xs:restriction base="xs:string"><xs:pattern value="\\d{2}"/></xs:restriction></xs:simpleType>`, ["12","123","a12"]],
  ["pattern with ^$ as literal chars: '^a$' matches literally '^a$' only", `<xs:simpleType><xs:restriction base="xs:string"><xs:pattern value="^a$"/></xs:restriction></xs:simpleType>`, ["^a$","a"]],
  ["date: valid 2024-02-29, invalid 2023-02-29, 2024-13-01, 0000-01-01", `<xs:simpleType><xs:restriction base="xs:date"/></xs:simpleType>`, ["2024-02-29","2023-02-29","2024-13-01","0000-01-01"]],
  ["dateTime 24:00:00 valid in 1.0 2nd ed; 24:00:01 invalid", `<xs:simpleType><xs:restriction base="xs:dateTime"/></xs:simpleType>`, ["2024-01-01T24:00:00","2024-01-01T24:00:01","2024-01-01T10:00:00+14:00","2024-01-01T10:00:00+14:01"]],
  ["float: valid INF -INF NaN 1e5; invalid +INF inf", `<xs:simpleType><xs:restriction base="xs:float"/></xs:simpleType>`, ["INF","-INF","NaN","1e5","+INF","inf"]],
  ["hexBinary odd invalid", `<xs:simpleType><xs:restriction base="xs:hexBinary"/></xs:simpleType>`, ["0A","0AB"]],
  ["boolean: valid ' true ', 1; invalid TRUE", `<xs:simpleType><xs:restriction base="xs:boolean"/></xs:simpleType>`, [" true ","1","TRUE"]],
  ["gYear: 0000 invalid in 1.0, -0001 valid", `<xs:simpleType><xs:restriction base="xs:gYear"/></xs:simpleType>`, ["0000","-0001","02024"]],
  ["decimal lexical: valid +.5 5. -0; invalid . 1e2", `<xs:simpleType><xs:restriction base="xs:decimal"/></xs:simpleType>`, ["+.5","5.","-0",".","1e2"]],
  ["maxInclusive 10 on decimal: 10.0 valid, 10.01 invalid", `<xs:simpleType><xs:restriction base="xs:decimal"><xs:maxInclusive value="10"/></xs:restriction></xs:simpleType>`, ["10.0","10.01"]],
  ["length 3 on normalizedString with whitespace replace: 'a\\tb' length 3", `<xs:simpleType><xs:restriction base="xs:token"><xs:length value="3"/></xs:restriction></xs:simpleType>`, ["  a b  ","abcd"]],
  ["duration: P1Y valid; P invalid; PT invalid; P1M1Y invalid", `<xs:simpleType><xs:restriction base="xs:duration"/></xs:simpleType>`, ["P1Y","P","PT","-P1D","P1M1Y","PT1.5S"]],
  ["duration maxInclusive P1M: P31D indeterminate->invalid; P27D valid", `<xs:simpleType><xs:restriction base="xs:duration"><xs:maxInclusive value="P1M"/></xs:restriction></xs:simpleType>`, ["P27D","P31D","P30D"]],
  ["enumeration of decimal: 1.0 matches enum 1", `<xs:simpleType><xs:restriction base="xs:decimal"><xs:enumeration value="1"/></xs:restriction></xs:simpleType>`, ["1.0","01","1.1"]],
  ["anyURI with space?", `<xs:simpleType><xs:restriction base="xs:anyURI"/></xs:simpleType>`, ["http://a b","%"]],
  ["language", `<xs:simpleType><xs:restriction base="xs:language"/></xs:simpleType>`, ["en-US","en_US","toolongtag-x"]],
  ["unsignedByte 256 invalid, +1 valid", `<xs:simpleType><xs:restriction base="xs:unsignedByte"/></xs:simpleType>`, ["256","+1","-0"]],
  ["base64Binary 'AB==' invalid? (trailing bits nonzero) 'AA==' valid", `<xs:simpleType><xs:restriction base="xs:base64Binary"/></xs:simpleType>`, ["AA==","AB==","A"]],
  ["time 24:00:00 valid", `<xs:simpleType><xs:restriction base="xs:time"/></xs:simpleType>`, ["24:00:00","23:59:60"]],
];
for (const [name, t, vals] of cases) {
  console.log("=== " + name);
  run("xsd", typ(t), `<r>\n${vals.map(v => `<v>${v}</v>`).join("\n")}\n</r>`);
}
