import { run } from "./h.ts";
const X = (b: string, extra = '') => `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" ${extra}>${b}</xs:schema>`;
console.log("=== keyref int key vs string keyref (expect keyref fail)");
run("xsd", X(`<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="k" maxOccurs="unbounded"><xs:complexType><xs:attribute name="id" type="xs:integer"/></xs:complexType></xs:element><xs:element name="ref" maxOccurs="unbounded"><xs:complexType><xs:attribute name="to" type="xs:string"/></xs:complexType></xs:element></xs:sequence></xs:complexType>
<xs:key name="K"><xs:selector xpath="k"/><xs:field xpath="@id"/></xs:key><xs:keyref name="R" refer="K"><xs:selector xpath="ref"/><xs:field xpath="@to"/></xs:keyref></xs:element>`),
 `<r><k id="1"/><k id="01"/><ref to="1"/></r>`);
console.log("=== key missing field, unique dup, decimal equality 1.0 vs 1");
run("xsd", X(`<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="k" maxOccurs="unbounded"><xs:complexType><xs:attribute name="id" type="xs:decimal"/></xs:complexType></xs:element></xs:sequence></xs:complexType>
<xs:unique name="U"><xs:selector xpath="k"/><xs:field xpath="@id"/></xs:unique></xs:element>`),
 `<r><k id="1.0"/><k/><k id="1"/></r>`);
console.log("=== key missing field");
run("xsd", X(`<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="k" maxOccurs="unbounded"><xs:complexType><xs:attribute name="id" type="xs:string"/></xs:complexType></xs:element></xs:sequence></xs:complexType>
<xs:key name="K"><xs:selector xpath="k"/><xs:field xpath="@id"/></xs:key></xs:element>`),
 `<r><k id="a"/><k/></r>`);
const any = (pc: string) => X(`<xs:element name="r"><xs:complexType><xs:sequence><xs:any processContents="${pc}" namespace="##any" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element><xs:element name="n" type="xs:int"/>`);
for (const pc of ["lax","strict","skip"]) { console.log(`=== any ${pc}: <n>x</n> (lax/strict fail), <zz/> (strict fail)`); run("xsd", any(pc), `<r><n>x</n><zz/></r>`); }
console.log("=== substitution group + abstract head");
run("xsd", X(`<xs:element name="head" abstract="true" type="xs:string"/><xs:element name="m1" substitutionGroup="head"/><xs:element name="r"><xs:complexType><xs:sequence><xs:element ref="head" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element>`), `<r><m1>a</m1><head>b</head></r>`);
console.log("=== xsi:type to abstract type, to derived, to unrelated");
run("xsd", X(`<xs:complexType name="B" abstract="true"><xs:sequence><xs:element name="x" type="xs:string"/></xs:sequence></xs:complexType><xs:complexType name="D"><xs:complexContent><xs:extension base="B"><xs:sequence><xs:element name="y" type="xs:int"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType><xs:complexType name="U"><xs:sequence><xs:element name="x" type="xs:string"/></xs:sequence></xs:complexType>
<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="e" type="B" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element>`),
 `<r xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><e xsi:type="D"><x/><y>1</y></e><e><x/></e><e xsi:type="U"><x/></e></r>`);
console.log("=== xsi:nil: nillable with content, non-nillable nil, nil true no content OK");
run("xsd", X(`<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="a" type="xs:int" nillable="true" maxOccurs="unbounded"/><xs:element name="b" type="xs:int"/></xs:sequence></xs:complexType></xs:element>`),
 `<r xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><a xsi:nil="true"/><a xsi:nil="true">5</a><b xsi:nil="true"/></r>`);
console.log("=== fixed attr & element");
run("xsd", X(`<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="a" type="xs:decimal" fixed="1.0" maxOccurs="unbounded"/></xs:sequence><xs:attribute name="v" type="xs:string" fixed="x"/></xs:complexType></xs:element>`),
 `<r v="y"><a>1</a><a>2</a><a/></r>`);
console.log("=== QName enumeration: schema enum p:a with p=urn:x; doc uses q:a with q=urn:x (valid), p:a with p=urn:y (invalid)");
run("xsd", X(`<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="q" maxOccurs="unbounded"><xs:simpleType><xs:restriction base="xs:QName"><xs:enumeration value="p:a"/></xs:restriction></xs:simpleType></xs:element></xs:sequence></xs:complexType></xs:element>`, `xmlns:p="urn:x"`),
 `<r><q xmlns:q="urn:x">q:a</q><q xmlns:p="urn:y">p:a</q><q>zz:a</q></r>`);
console.log("=== xs:all: order free, each once");
run("xsd", X(`<xs:element name="r"><xs:complexType><xs:all><xs:element name="a"/><xs:element name="b" minOccurs="0"/></xs:all></xs:complexType></xs:element>`), `<r><b/><a/><a/></r>`);
console.log("=== choice");
run("xsd", X(`<xs:element name="r"><xs:complexType><xs:choice><xs:element name="a"/><xs:element name="b"/></xs:choice></xs:complexType></xs:element>`), `<r><a/><b/></r>`);
