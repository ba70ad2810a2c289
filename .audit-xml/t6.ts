import { run } from "./h.ts";
const X = (b: string, extra = '') => `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" ${extra}>${b}</xs:schema>`;
console.log("=== keyref multi-line");
run("xsd", X(`<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="k" maxOccurs="unbounded"><xs:complexType><xs:attribute name="id" type="xs:string"/></xs:complexType></xs:element><xs:element name="ref" maxOccurs="unbounded"><xs:complexType><xs:attribute name="to" type="xs:string"/></xs:complexType></xs:element></xs:sequence></xs:complexType>
<xs:key name="K"><xs:selector xpath="k"/><xs:field xpath="@id"/></xs:key><xs:keyref name="R" refer="K"><xs:selector xpath="ref"/><xs:field xpath="@to"/></xs:keyref></xs:element>`),
 `<r>\n<k id="a"/>\n<ref to="a"/>\n<ref to="b"/>\n<ref to="c"/>\n</r>`);
console.log("=== fixed attr decimal 1.0 vs 1 (valid by value)");
run("xsd", X(`<xs:element name="r"><xs:complexType><xs:attribute name="v" type="xs:decimal" fixed="1.0"/></xs:complexType></xs:element>`), `<r v="1"/>`);
console.log("=== fixed element decimal 1.0 vs 1.00");
run("xsd", X(`<xs:element name="r" type="xs:decimal" fixed="1.0"/>`), `<r>1.00</r>`);
console.log("=== default attr with attribute missing OK; default element empty OK");
run("xsd", X(`<xs:element name="r" type="xs:int" default="3"/>`), `<r/>`);
