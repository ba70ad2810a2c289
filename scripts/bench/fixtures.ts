// What the benchmark submits: a ~1 KB valid order (JSON Schema step), and ~10 MB documents of
// three kinds (JSON array, XML, CSV), each valid against its schema so every row is checked.
// Deterministic: the same bytes on every run and every machine.

/** The workflow definitions, as POST /workflows/ bodies. */
export const WORKFLOWS = {
  order: {
    slug: "bench-order",
    name: "Bench: order (JSON Schema)",
    allowed_file_types: ["JSON"],
    steps: [{ name: "order schema", validator: "json_schema", config: { schema: orderSchema() } }],
  },
  jsonArray: {
    slug: "bench-json-array",
    name: "Bench: 10 MB JSON array",
    allowed_file_types: ["JSON"],
    steps: [{ name: "records schema", validator: "json_schema", config: { schema: recordsSchema() } }],
  },
  xml: {
    slug: "bench-xml",
    name: "Bench: 10 MB XML (XSD)",
    allowed_file_types: ["XML"],
    steps: [{ name: "xsd", validator: "xml_schema", config: { schema_type: "xsd", schema: ordersXsd() } }],
  },
  csv: {
    slug: "bench-csv",
    name: "Bench: 10 MB CSV (Table Schema)",
    allowed_file_types: ["CSV"],
    steps: [{ name: "table schema", validator: "csv_table", config: { schema: ordersTableSchema() } }],
  },
} as const;

function orderSchema() {
  const item = {
    type: "object",
    required: ["sku", "qty", "price"],
    additionalProperties: false,
    properties: {
      sku: { type: "string", pattern: "^SKU-[0-9]{4}$" },
      qty: { type: "integer", minimum: 1, maximum: 1000 },
      price: { type: "number", minimum: 0 },
      gift: { type: "boolean" },
    },
  };
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    required: ["id", "customer", "created", "status", "items", "total"],
    additionalProperties: false,
    properties: {
      id: { type: "string", pattern: "^ord-[0-9]{6}$" },
      customer: {
        type: "object",
        required: ["name", "email", "country"],
        properties: {
          name: { type: "string", minLength: 1, maxLength: 200 },
          email: { type: "string", format: "email" },
          country: { type: "string", enum: ["GB", "FR", "DE", "US", "JP"] },
        },
      },
      created: { type: "string", format: "date-time" },
      status: { enum: ["new", "paid", "shipped"] },
      items: { type: "array", minItems: 1, maxItems: 100, items: item },
      total: { type: "number", minimum: 0 },
      notes: { type: "string", maxLength: 2000 },
    },
  };
}

/** A valid order of about 1 KB. */
export function orderDocument(): string {
  const items = Array.from({ length: 8 }, (_, i) => ({
    sku: `SKU-${1000 + i}`,
    qty: i + 1,
    price: 9.5 + i,
    gift: i % 2 === 0,
  }));
  const doc = {
    id: "ord-000123",
    customer: { name: "Ada Lovelace", email: "ada@example.com", country: "GB" },
    created: "2026-01-01T12:00:00Z",
    status: "paid",
    items,
    total: items.reduce((t, x) => t + x.qty * x.price, 0),
    notes: "",
  };
  const base = JSON.stringify(doc).length;
  doc.notes = "n".repeat(Math.max(0, 1024 - base));
  return JSON.stringify(doc);
}

function recordsSchema() {
  return {
    type: "array",
    items: {
      type: "object",
      required: ["id", "name", "email", "amount", "active", "tags"],
      additionalProperties: false,
      properties: {
        id: { type: "integer", minimum: 1 },
        name: { type: "string", minLength: 1, maxLength: 100 },
        email: { type: "string", format: "email" },
        amount: { type: "number", minimum: 0 },
        active: { type: "boolean" },
        tags: { type: "array", items: { type: "string" }, maxItems: 10 },
      },
    },
  };
}

/** Repeats `row(i)` until the text reaches `bytes`; returns head + rows + tail. */
function fill(bytes: number, head: string, tail: string, row: (i: number) => string): string {
  const parts = [head];
  let size = head.length + tail.length;
  for (let i = 1; size < bytes; i++) {
    const r = row(i);
    parts.push(r);
    size += r.length;
  }
  parts.push(tail);
  return parts.join("");
}

export function jsonArrayDocument(bytes: number): string {
  return fill(bytes, "[", "]", (i) => {
    const r = JSON.stringify({
      id: i,
      name: `Customer ${i}`,
      email: `user${i}@example.com`,
      amount: (i % 1000) + 0.25,
      active: i % 3 !== 0,
      tags: ["retail", i % 2 ? "eu" : "us"],
    });
    return i === 1 ? r : `,${r}`;
  });
}

function ordersXsd(): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified">
  <xs:element name="orders">
    <xs:complexType>
      <xs:sequence>
        <xs:element name="order" maxOccurs="unbounded">
          <xs:complexType>
            <xs:sequence>
              <xs:element name="customer" type="xs:string"/>
              <xs:element name="email" type="xs:string"/>
              <xs:element name="amount" type="xs:decimal"/>
              <xs:element name="date" type="xs:date"/>
            </xs:sequence>
            <xs:attribute name="id" type="xs:positiveInteger" use="required"/>
            <xs:attribute name="status" use="required">
              <xs:simpleType>
                <xs:restriction base="xs:string">
                  <xs:enumeration value="new"/><xs:enumeration value="paid"/><xs:enumeration value="shipped"/>
                </xs:restriction>
              </xs:simpleType>
            </xs:attribute>
          </xs:complexType>
        </xs:element>
      </xs:sequence>
    </xs:complexType>
  </xs:element>
</xs:schema>`;
}

export function xmlDocument(bytes: number): string {
  const statuses = ["new", "paid", "shipped"];
  return fill(
    bytes,
    '<?xml version="1.0" encoding="UTF-8"?>\n<orders>\n',
    "</orders>\n",
    (i) =>
      `<order id="${i}" status="${statuses[i % 3]}"><customer>Customer ${i}</customer><email>user${i}@example.com</email><amount>${(i % 1000) + 0.25}</amount><date>2026-01-${String((i % 28) + 1).padStart(2, "0")}</date></order>\n`,
  );
}

function ordersTableSchema() {
  return {
    fields: [
      { name: "id", type: "integer", constraints: { required: true, minimum: 1 } },
      { name: "customer", type: "string", constraints: { required: true, maxLength: 100 } },
      { name: "email", type: "string", format: "email" },
      { name: "amount", type: "number", constraints: { minimum: 0 } },
      { name: "date", type: "date" },
      { name: "active", type: "boolean" },
    ],
  };
}

export function csvDocument(bytes: number): string {
  return fill(
    bytes,
    "id,customer,email,amount,date,active\n",
    "",
    (i) =>
      `${i},Customer ${i},user${i}@example.com,${(i % 1000) + 0.25},2026-01-${String((i % 28) + 1).padStart(2, "0")},${i % 3 !== 0}\n`,
  );
}
