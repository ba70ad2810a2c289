// The schematron validator construct by construct: each test builds a small schema, runs it the
// way a worker does (save-time check, compile, run) and checks code, message, path, line, column.
import { beforeAll, describe, expect, test } from "bun:test";
import { checkStepConfig } from "../../../src/validators/registry.ts";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { codes, run } from "./helpers.ts";

beforeAll(() => loadLibxml());

const sch = (body: string, attrs = 'queryBinding="xslt2"') =>
  `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" ${attrs}>\n${body}\n</sch:schema>`;

const validate = (schema: string, xml: string, extra: Record<string, unknown> = {}) =>
  run("schematron", { schema, ...extra }, xml, "XML");

const slim = (r: ReturnType<typeof validate>) =>
  r.findings.map((f) => ({
    severity: f.severity,
    code: f.code,
    message: f.message,
    path: f.path,
    line: f.line,
    column: f.column,
  }));

const order = `<order id="o1">
  <line sku="a" qty="2" price="10.00"/>
  <line sku="b" qty="0" price="5.50"/>
  <total>25.50</total>
</order>`;

describe("schematron: asserts and reports", () => {
  test("a failed assert: code from its id, values filled in, XPath, line and column of the context", () => {
    const schema = sch(`<sch:pattern><sch:rule context="line">
      <sch:assert id="QTY-1" test="@qty > 0">Line <sch:value-of select="@sku"/> has quantity <sch:value-of select="@qty"/>.</sch:assert>
    </sch:rule></sch:pattern>`);
    const r = validate(schema, order);
    expect(slim(r)).toEqual([
      {
        severity: "error",
        code: "schematron.QTY-1",
        message: "Line b has quantity 0.",
        path: "/order/line[2]",
        line: 3,
        column: 3,
      },
    ]);
    expect(r.findings[0].rule).toBe("@qty > 0");
  });

  test("a report fires when its test is true; sch:name names the node", () => {
    const schema = sch(`<sch:pattern><sch:rule context="total">
      <sch:report id="TOTAL" role="info" test=". > 20"><sch:name/> is <sch:value-of select="."/>, at <sch:name path=".."/></sch:report>
    </sch:rule></sch:pattern>`);
    expect(slim(validate(schema, order))).toEqual([
      {
        severity: "info",
        code: "schematron.TOTAL",
        message: "total is 25.50, at order",
        path: "/order/total",
        line: 4,
        column: 3,
      },
    ]);
  });

  test("without an id the SVRL names: failed_assert, successful_report", () => {
    const schema = sch(`<sch:pattern><sch:rule context="order">
      <sch:assert test="false()">never</sch:assert><sch:report test="true()">always</sch:report>
    </sch:rule></sch:pattern>`);
    expect(validate(schema, order).findings.map((f) => f.code)).toEqual([
      "schematron.failed_assert",
      "schematron.successful_report",
    ]);
  });

  test("role and flag map to severity (fatal/error, warning, information/info; the rule's flag is inherited)", () => {
    const schema = sch(`<sch:pattern>
      <sch:rule context="order" flag="warning">
        <sch:assert id="A" test="false()" flag="fatal">a</sch:assert>
        <sch:assert id="B" test="false()" role="warning">b</sch:assert>
        <sch:assert id="C" test="false()" role="information">c</sch:assert>
        <sch:assert id="D" test="false()" role="info">d</sch:assert>
        <sch:assert id="E" test="false()" role="error">e</sch:assert>
        <sch:assert id="F" test="false()">f</sch:assert>
      </sch:rule>
      <sch:rule context="total"><sch:assert id="G" test="false()" role="BR-ROLE">g</sch:assert></sch:rule>
    </sch:pattern>`);
    expect(validate(schema, order).findings.map((f) => `${f.code} ${f.severity}`)).toEqual([
      "schematron.A error",
      "schematron.B warning",
      "schematron.C info",
      "schematron.D info",
      "schematron.E error",
      "schematron.F warning",
      "schematron.G error",
    ]);
  });

  test("an attribute context is located at the attribute's name", () => {
    const schema = sch(`<sch:pattern><sch:rule context="line/@price">
      <sch:assert id="P" test="xs:decimal(.) > 6">price <sch:value-of select="."/></sch:assert>
    </sch:rule></sch:pattern>`);
    expect(slim(validate(schema, order))).toEqual([
      {
        severity: "error",
        code: "schematron.P",
        message: "price 5.50",
        path: "/order/line[2]/@price",
        line: 3,
        column: 25,
      },
    ]);
  });

  test("an attribute is located at its own name, not at the same words inside an earlier value", () => {
    const schema = sch(`<sch:pattern><sch:rule context="line/@qty">
      <sch:assert id="Q" test=". > 0">qty</sch:assert>
    </sch:rule></sch:pattern>`);
    const xml = `<order>\n<line note='set qty="0" here' data-qty = "1"\n  qty = "0"/>\n</order>`;
    expect(slim(validate(schema, xml)).map((f) => [f.path, f.line, f.column])).toEqual([
      ["/order/line/@qty", 3, 3],
    ]);
  });

  test("subject moves the finding to another node", () => {
    const schema = sch(`<sch:pattern><sch:rule context="order">
      <sch:assert id="S" test="sum(line/(@qty * @price)) = xs:decimal(total)" subject="total">total</sch:assert>
    </sch:rule></sch:pattern>`);
    const [f] = validate(schema, order).findings;
    expect({ path: f.path, line: f.line, column: f.column }).toEqual({
      path: "/order/total",
      line: 4,
      column: 3,
    });
  });
});

describe("schematron: rules and patterns", () => {
  test("within a pattern a node is handled by the first rule that matches it; patterns are independent", () => {
    const schema = sch(`<sch:pattern id="p1">
        <sch:rule context="line[@sku = 'a']"><sch:report id="FIRST" test="true()">first</sch:report></sch:rule>
        <sch:rule context="line"><sch:report id="SECOND" test="true()">second</sch:report></sch:rule>
      </sch:pattern>
      <sch:pattern id="p2"><sch:rule context="line"><sch:report id="OTHER" test="true()">other</sch:report></sch:rule></sch:pattern>`);
    expect(validate(schema, order).findings.map((f) => `${f.code} ${f.line}`)).toEqual([
      "schematron.FIRST 2",
      "schematron.SECOND 3",
      "schematron.OTHER 2",
      "schematron.OTHER 3",
    ]);
  });

  test("contexts: unions, absolute paths, // inside, predicates by position, text()", () => {
    const schema = sch(`<sch:pattern>
        <sch:rule context="/order"><sch:report id="ROOT" test="true()">r</sch:report></sch:rule>
        <sch:rule context="total | line[2]"><sch:report id="U" test="true()">u</sch:report></sch:rule>
        <sch:rule context="order//line"><sch:report id="DEEP" test="true()">d</sch:report></sch:rule>
        <sch:rule context="total/text()"><sch:report id="T" test="true()">t</sch:report></sch:rule>
      </sch:pattern>`);
    expect(validate(schema, order).findings.map((f) => `${f.code} ${f.path} ${f.line}:${f.column}`)).toEqual([
      "schematron.ROOT /order 1:1",
      "schematron.U /order/line[2] 3:3",
      "schematron.U /order/total 4:3",
      "schematron.DEEP /order/line[1] 2:3",
      "schematron.T /order/total/text() 4:10",
    ]);
  });

  test("position() and last() in a predicate count among the step's siblings, not the document's", () => {
    const items = `<r>\n<a><item n="1"/><item n="2"/></a>\n<a><item n="3"/><item n="4"/></a>\n</r>`;
    const fired = (context: string) =>
      validate(
        sch(
          `<sch:pattern><sch:rule context="${context}"><sch:report test="true()"><sch:value-of select="@n"/></sch:report></sch:rule></sch:pattern>`,
        ),
        items,
      ).findings.map((f) => f.message);
    expect(fired("item[position() > 1]")).toEqual(["2", "4"]);
    expect(fired("a/item[position() = last()]")).toEqual(["2", "4"]);
    expect(fired("item[not(position() = 1)]")).toEqual(["2", "4"]);
    // A minus right before the call: `3-last()` is 3 minus last(), not a name ending in -last.
    expect(fired("item[@n = 3-last()]")).toEqual(["1"]);
    expect(fired("item[@n = 6 -position()]")).toEqual(["4"]);
    expect(fired("item[@n != 'position()']")).toEqual(["1", "2", "3", "4"]);
    // In a test: `//item[position() = 1]` is the first item of each a.
    const counted = validate(
      sch(
        `<sch:pattern><sch:rule context="/r"><sch:assert test="count(//item[position() = 1]) = 2">n</sch:assert></sch:rule></sch:pattern>`,
      ),
      items,
    );
    expect(counted.findings).toEqual([]);
  });

  test("a CDATA section is part of the text around it: one text node, as XPath's data model has it", () => {
    const schema = sch(`<sch:pattern><sch:rule context="p">
        <sch:assert id="ONE" test="count(text()) = 1">n=<sch:value-of select="count(text())"/></sch:assert>
        <sch:assert id="EQ" test="text() = 'AT&amp;T'">t</sch:assert>
        <sch:assert id="LEN" test="string-length(text()) = 4">l</sch:assert>
      </sch:rule></sch:pattern>`);
    expect(validate(schema, "<r><p>AT<![CDATA[&]]>T</p></r>").findings).toEqual([]);
    // The joined "a" + CDATA "b" is text()[1]; "c" after <x/> is text()[2], at its own column.
    const at = sch(
      `<sch:pattern><sch:rule context="p"><sch:report test="true()" subject="text()[2]">x</sch:report></sch:rule></sch:pattern>`,
    );
    expect(
      validate(at, "<r>\n<p>a<![CDATA[b]]><x/>c</p></r>").findings.map(
        (f) => `${f.path} ${f.line}:${f.column}`,
      ),
    ).toEqual(["/r/p/text()[2] 2:22"]);
  });

  test("an entity a DTD Assay never reads may declare: well-formed, read as empty, and said", () => {
    const schema = sch(
      `<sch:pattern><sch:rule context="b"><sch:report id="B" test="true()">b=[<sch:value-of select="."/>]</sch:report></sch:rule></sch:pattern>`,
    );
    for (const xml of [
      '<!DOCTYPE r SYSTEM "r.dtd">\n<r>\n<b>a&nbsp;c</b></r>',
      '<!DOCTYPE r [<!ENTITY % p SYSTEM "p.ent"> %p;]>\n<r>\n<b>a&nbsp;c</b></r>',
    ]) {
      const found = slim(validate(schema, xml));
      expect(found.filter((f) => f.code === "schematron.B")).toEqual([
        { severity: "error", code: "schematron.B", message: "b=[ac]", path: "/r/b", line: 3, column: 1 },
      ]);
      expect(found.some((f) => f.code === "xml.not_well_formed")).toBe(false);
      expect(found.filter((f) => f.severity === "warning").map((f) => f.message)).toEqual([
        expect.stringContaining("nbsp"),
      ]);
    }
  });

  test("`//name` after a step named like an operator (to, div, and …) stays relative to that step", () => {
    const schema = sch(`<sch:pattern><sch:rule context="mail">
      <sch:let name="paras" value="count(div//p)"/>
      <sch:assert id="TO" test="count(to//addr) = 1 and $paras = 1 and count(and//x) = 0 and count(//addr) = 2">to: <sch:value-of select="count(to//addr)"/></sch:assert>
    </sch:rule></sch:pattern>`);
    const xml = "<mail><to><addr/></to><cc><addr/></cc><div><p/></div><p/></mail>";
    expect(validate(schema, xml).findings).toEqual([]);
    const twice = xml.replace("<cc><addr/></cc>", "<to><addr/></to>");
    expect(slim(validate(schema, twice)).map((f) => `${f.code} ${f.message}`)).toEqual([
      "schematron.TO to: 2",
    ]);
  });

  test("abstract rules are copied where sch:extends names them, and never run themselves", () => {
    const schema = sch(`<sch:pattern>
        <sch:rule abstract="true" id="has-sku"><sch:assert id="SKU" test="@sku">sku</sch:assert></sch:rule>
        <sch:rule context="line"><sch:extends rule="has-sku"/><sch:assert id="QTY" test="@qty > 0">qty</sch:assert></sch:rule>
      </sch:pattern>`);
    const xml = '<order>\n<line qty="1"/>\n<line sku="x" qty="0"/>\n</order>';
    expect(validate(schema, xml).findings.map((f) => `${f.code} ${f.line}`)).toEqual([
      "schematron.SKU 2",
      "schematron.QTY 3",
    ]);
  });

  test("abstract patterns are instantiated with is-a and sch:param, longer names first", () => {
    const schema = sch(`<sch:pattern abstract="true" id="positive">
        <sch:rule context="$item"><sch:assert id="POS" test="$value > $value-min">$item <sch:value-of select="$value"/></sch:assert></sch:rule>
      </sch:pattern>
      <sch:pattern is-a="positive" id="lines">
        <sch:param name="item" value="line"/><sch:param name="value" value="@qty"/><sch:param name="value-min" value="0"/>
      </sch:pattern>`);
    expect(slim(validate(schema, order))).toEqual([
      {
        severity: "error",
        code: "schematron.POS",
        message: "$item 0",
        path: "/order/line[2]",
        line: 3,
        column: 3,
      },
    ]);
  });
});

describe("schematron: variables, diagnostics, phases, parameters, includes", () => {
  test("sch:let at schema, pattern and rule level, typed values kept (decimals)", () => {
    const schema = sch(`<sch:let name="tolerance" value="xs:decimal('0.01')"/>
      <sch:let name="currency" value="'EUR'"/>
      <sch:pattern><sch:let name="lines" value="//line"/>
        <sch:rule context="total">
          <sch:let name="sum" value="sum($lines/(xs:decimal(@qty) * xs:decimal(@price)))"/>
          <sch:assert id="SUM" test="abs($sum - xs:decimal(.)) le $tolerance">total <sch:value-of select="."/> is not <sch:value-of select="$sum"/> <sch:value-of select="$currency"/></sch:assert>
        </sch:rule></sch:pattern>`);
    const r = validate(schema, order.replace("25.50", "20.01"));
    expect(r.findings.map((f) => f.message)).toEqual(["total 20.01 is not 20 EUR"]);
    expect(validate(schema, order.replace("25.50", "20.00")).findings).toEqual([]);
  });

  test("sch:diagnostics are appended to the message", () => {
    const schema = sch(`<sch:pattern><sch:rule context="line">
        <sch:assert id="Q" test="@qty > 0" diagnostics="d1 d2">Quantity must be positive.</sch:assert>
      </sch:rule></sch:pattern>
      <sch:diagnostics><sch:diagnostic id="d1">Found <sch:value-of select="@qty"/>.</sch:diagnostic>
      <sch:diagnostic id="d2">Item <sch:emph><sch:value-of select="@sku"/></sch:emph>.</sch:diagnostic></sch:diagnostics>`);
    expect(validate(schema, order).findings.map((f) => f.message)).toEqual([
      "Quantity must be positive. Found 0. Item b.",
    ]);
  });

  const phased = sch(
    `<sch:phase id="lines"><sch:active pattern="p-lines"/></sch:phase>
    <sch:phase id="totals"><sch:active pattern="p-total"/></sch:phase>
    <sch:pattern id="p-lines"><sch:rule context="line"><sch:report id="L" test="true()">l</sch:report></sch:rule></sch:pattern>
    <sch:pattern id="p-total"><sch:rule context="total"><sch:report id="T" test="true()">t</sch:report></sch:rule></sch:pattern>`,
    'queryBinding="xslt2" defaultPhase="totals"',
  );

  test("phases: the default phase, a chosen one, #ALL", () => {
    const ids = (extra: Record<string, unknown>) =>
      validate(phased, order, extra).findings.map((f) => f.code);
    expect(ids({})).toEqual(["schematron.T"]);
    expect(ids({ phase: "#DEFAULT" })).toEqual(["schematron.T"]);
    expect(ids({ phase: "lines" })).toEqual(["schematron.L", "schematron.L"]);
    expect(ids({ phase: "#ALL" })).toEqual(["schematron.L", "schematron.L", "schematron.T"]);
  });

  test("an unknown phase is refused at save time", () => {
    expect(checkStepConfig("schematron", { schema: phased, phase: "nope" })).toEqual([
      {
        field: "phase",
        code: "unknown_phase",
        message: '"nope" is not a phase of the schema (#ALL, lines, totals)',
      },
    ]);
  });

  test("parameters replace global lets by name; an unknown name is refused", () => {
    const schema = sch(`<sch:let name="max" value="10"/><sch:let name="cur" value="'EUR'"/>
      <sch:pattern><sch:rule context="line">
        <sch:assert id="MAX" test="xs:decimal(@price) le $max">price over <sch:value-of select="$max"/> <sch:value-of select="$cur"/></sch:assert>
      </sch:rule></sch:pattern>`);
    expect(validate(schema, order).findings).toEqual([]);
    expect(
      validate(schema, order, { parameters: { max: 6, cur: "USD" } }).findings.map((f) => f.message),
    ).toEqual(["price over 6 USD"]);
    expect(validate(schema, order, { parameters: { max: 5.25 } }).findings).toHaveLength(2);
    expect(checkStepConfig("schematron", { schema, parameters: { nope: 1 } })).toEqual([
      {
        field: "parameters.nope",
        code: "unknown_parameter",
        message: "names no global sch:let of the schema",
      },
    ]);
  });

  test("a let sees only the lets before it (schema, pattern, rule): a later one is refused at save time", () => {
    const x = '<sch:let name="x" value="$y + 1"/>';
    const y = '<sch:let name="y" value="1"/>';
    const report = '<sch:report id="X" test="$x = 2">x</sch:report>';
    const refusal = [
      {
        field: "schema",
        code: "invalid_expression",
        message: 'line 3: the let "x" "$y + 1" refers to $y, which no sch:let in scope declares',
      },
    ];
    const at = {
      schema: (l: string) =>
        sch(`\n${l}<sch:pattern><sch:rule context="order">${report}</sch:rule></sch:pattern>`),
      pattern: (l: string) =>
        sch(`<sch:pattern>\n${l}<sch:rule context="order">${report}</sch:rule></sch:pattern>`),
      rule: (l: string) =>
        sch(`<sch:pattern><sch:rule context="order">\n${l}${report}</sch:rule></sch:pattern>`),
    };
    for (const [level, schema] of Object.entries(at)) {
      expect([level, checkStepConfig("schematron", { schema: schema(x + y) })]).toEqual([level, refusal]);
      expect([level, codes(validate(schema(y + x), order))]).toEqual([level, ["schematron.X"]]);
    }
  });

  test("a phase's lets are in scope only when that phase runs: checked for the phase the step runs", () => {
    const schema = sch(`<sch:phase id="p1"><sch:active pattern="a"/></sch:phase>
      <sch:phase id="p2"><sch:let name="z" value="2"/><sch:active pattern="a"/><sch:active pattern="b"/></sch:phase>
      <sch:pattern id="a"><sch:rule context="order"><sch:report id="Z" test="$z = 2">z</sch:report></sch:rule></sch:pattern>
      <sch:pattern id="b"><sch:rule context="total"><sch:report id="B" test="$z = 2">b</sch:report></sch:rule></sch:pattern>`);
    const missing = (line: number, phase: string) => ({
      field: "schema",
      code: "invalid_expression",
      message: `line ${line}: the report test "$z = 2" refers to $z, which no sch:let in scope declares when ${phase}`,
    });
    expect(codes(validate(schema, order, { phase: "p2" }))).toEqual(["schematron.Z", "schematron.B"]);
    // p1 runs pattern a without $z; b does not run under p1, and p2 (which runs it) declares $z.
    expect(checkStepConfig("schematron", { schema, phase: "p1" })).toEqual([missing(4, 'phase "p1" runs')]);
    // #ALL runs every pattern with the schema's lets alone.
    expect(checkStepConfig("schematron", { schema })).toEqual([
      missing(4, "all patterns run (#ALL)"),
      missing(5, "all patterns run (#ALL)"),
    ]);
  });

  test("sch:include is resolved against the config's includes, relative to the including document", () => {
    const schema = sch(`<sch:include href="rules/lines.sch"/>`);
    const includes = {
      "rules/lines.sch": `<sch:pattern xmlns:sch="http://purl.oclc.org/dsdl/schematron">
  <sch:include href="../shared/rule.sch"/>
</sch:pattern>`,
      "shared/rule.sch": `<sch:rule xmlns:sch="http://purl.oclc.org/dsdl/schematron" context="line">
  <sch:assert id="INC" test="@qty > 0">q</sch:assert>
</sch:rule>`,
    };
    expect(validate(schema, order, { includes }).findings.map((f) => `${f.code} ${f.line}`)).toEqual([
      "schematron.INC 3",
    ]);
  });

  test("current() is the rule's context node", () => {
    const schema = sch(`<sch:pattern><sch:rule context="line">
      <sch:assert id="UNIQUE" test="count(//line[@sku = current()/@sku]) = 1">dup</sch:assert>
    </sch:rule></sch:pattern>`);
    const xml = '<order><line sku="a"/><line sku="b"/><line sku="a"/></order>';
    expect(validate(schema, xml).findings.map((f) => f.path)).toEqual(["/order/line[1]", "/order/line[3]"]);
  });

  test("serialize() gives a node's markup (it failed every run: no serializer was set)", () => {
    const schema = sch(`<sch:pattern><sch:rule context="line">
      <sch:report id="SER" role="info" test="true()"><sch:value-of select="serialize(.)"/></sch:report>
    </sch:rule></sch:pattern>`);
    const xml = '<order><line sku="a"><n>1</n></line></order>';
    const r = validate(schema, xml);
    expect(r.findings.map((f) => [f.severity, f.code, f.message])).toEqual([
      ["info", "schematron.SER", '<line sku="a"><n>1</n></line>'],
    ]);
  });

  test("namespaces come from sch:ns; the document's prefixes are kept in paths", () => {
    const schema = sch(`<sch:ns prefix="o" uri="urn:order"/>
      <sch:pattern><sch:rule context="o:line"><sch:assert id="NS" test="@qty > 0">q</sch:assert></sch:rule></sch:pattern>`);
    const xml = '<x:order xmlns:x="urn:order">\n  <x:line qty="1"/>\n  <x:line qty="0"/>\n</x:order>';
    expect(validate(schema, xml).findings.map((f) => `${f.path} ${f.line}:${f.column}`)).toEqual([
      "/x:order/x:line[2] 3:3",
    ]);
  });
});

describe("schematron: query bindings", () => {
  test.each(["xslt", "xslt2", "xslt3", "xpath2", "xpath31"])("%s is accepted", (binding) => {
    const schema = sch(
      '<sch:pattern><sch:rule context="line"><sch:assert id="Q" test="@qty > 0">q</sch:assert></sch:rule></sch:pattern>',
      `queryBinding="${binding}"`,
    );
    expect(validate(schema, order).findings.map((f) => f.code)).toEqual(["schematron.Q"]);
  });

  test("xsl:* elements are refused at save time wherever they are, named with their line", () => {
    const XSL = 'xmlns:xsl="http://www.w3.org/1999/XSL/Transform"';
    const refused = (body: string, line: number, name: string) =>
      expect(checkStepConfig("schematron", { schema: sch(body, `queryBinding="xslt2" ${XSL}`) })).toEqual([
        {
          field: "schema",
          code: "invalid_schema",
          message: `line ${line}: xsl:${name} is not supported: Assay evaluates the XPath of the schema, not XSLT`,
        },
      ]);
    const rule = (inside: string) =>
      `<sch:pattern>\n<sch:rule context="line">${inside}<sch:assert test="@qty">q</sch:assert></sch:rule></sch:pattern>`;
    refused('<xsl:key name="k" match="line" use="@sku"/>', 2, "key");
    refused(
      '<sch:pattern>\n<xsl:key name="k" match="line" use="@sku"/><sch:rule context="line"/></sch:pattern>',
      3,
      "key",
    );
    refused(rule('<xsl:variable name="v" select="1"/>'), 3, "variable");
    refused(
      '<sch:pattern><sch:rule context="line">\n<sch:assert test="@qty">q <xsl:value-of select="@sku"/></sch:assert></sch:rule></sch:pattern>',
      3,
      "value-of",
    );
  });

  test("no queryBinding means xslt (XPath 1.0 expressions)", () => {
    const schema = sch(
      '<sch:pattern><sch:rule context="line"><sch:assert test="@qty > 0">q</sch:assert></sch:rule></sch:pattern>',
      "",
    );
    expect(validate(schema, order).findings).toHaveLength(1);
  });
});

describe("schematron: documents", () => {
  const schema = sch(
    '<sch:pattern><sch:rule context="line"><sch:assert id="Q" test="@qty > 0">q</sch:assert></sch:rule></sch:pattern>',
  );

  test("a document that is not well-formed is reported as xml.not_well_formed, not evaluated", () => {
    const r = validate(schema, "<order>\n<line qty='0'>\n</order>");
    expect(r.findings.map((f) => `${f.code} ${f.line}`)).toEqual(["xml.not_well_formed 3"]);
  });

  test("the root element after a prolog is located at its `<` (slimdom-sax-parser reports one past it)", () => {
    const root = sch(
      '<sch:pattern><sch:rule context="/order"><sch:report id="R" test="true()">r</sch:report></sch:rule></sch:pattern>',
    );
    const r = validate(root, '<?xml version="1.0"?>\n<!-- c -->\n<order a="1"/>');
    expect(r.findings.map((f) => `${f.line}:${f.column}`)).toEqual(["3:1"]);
  });

  test("entities the document declares in its DTD are expanded, in text and attributes, at their lines", () => {
    const rule = (t: string) =>
      sch(
        `<sch:pattern><sch:rule context="a"><sch:assert id="E" test="${t}">e</sch:assert></sch:rule></sch:pattern>`,
      );
    // Nested entities and character references are libxml2's to resolve; a declaration in a
    // comment declares nothing.
    const doc =
      '<!DOCTYPE a [<!-- <!ENTITY z "q"> --><!ENTITY f "w&#38;#38;x"><!ENTITY e "he&f;llo">]>\n<a x="&e;">&e;</a>';
    expect(validate(rule("@x = 'hew&amp;xllo' and . = 'hew&amp;xllo'"), doc).findings).toEqual([]);
    expect(slim(validate(rule(". = 'hello'"), doc))).toEqual([
      { severity: "error", code: "schematron.E", message: "e", path: "/a", line: 2, column: 1 },
    ]);
    // An external entity is never loaded: libxml2 validated it empty, and so is it here.
    const ext = '<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>';
    expect(validate(rule(". = ''"), ext).findings).toEqual([]);
  });

  test("an entity that holds elements is read from libxml2's expanded tree: the path, no line", () => {
    const rule = sch(
      '<sch:pattern><sch:rule context="a"><sch:assert id="B" test="b = \'y\'">b</sch:assert></sch:rule></sch:pattern>',
    );
    const doc = '<!DOCTYPE a [<!ENTITY e "<b>x</b>">]><a>&e;</a>';
    expect(slim(validate(rule, doc))).toEqual([
      { severity: "error", code: "schematron.B", message: "b", path: "/a", line: null, column: null },
    ]);
    expect(validate(rule, doc.replace("x</b>", "y</b>")).findings).toEqual([]);
  });

  test("a document that is not well-formed carries the rule it broke", () => {
    const r = validate(schema, '<!DOCTYPE a [<!ENTITY e "x">]><a>&f;</a>');
    expect(r.findings.map((f) => `${f.code} ${f.rule}`)).toEqual(["xml.not_well_formed xml:well-formed"]);
  });

  test("billion laughs stops at libxml2's amplification limit", () => {
    const lol = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ""};`.repeat(10)}">`).join("")}]><lolz>&lol9;</lolz>`;
    const r = validate(schema, lol);
    expect(r.findings[0].code).toBe("xml.entity_expansion_limit");
  });

  test("findings are capped at max_findings with truncated", () => {
    const xml = `<order>${'<line qty="0"/>'.repeat(20)}</order>`;
    const r = validate(schema, xml, { max_findings: 3 });
    expect(r.findings).toHaveLength(3);
    expect(r.truncated).toBe(true);
  });

  test("a test that cannot be evaluated is an evaluation_error at its node; the others still run", () => {
    const bad = sch(`<sch:pattern><sch:rule context="line">
      <sch:assert id="CAST" test="xs:decimal(@price) > 0">cast</sch:assert>
      <sch:assert id="Q" test="@qty > 0">q</sch:assert>
    </sch:rule></sch:pattern>`);
    const r = validate(bad, '<order>\n<line price="abc" qty="0"/>\n</order>');
    expect(r.findings.map((f) => `${f.code} ${f.severity} ${f.line}`)).toEqual([
      "schematron.evaluation_error error 2",
      "schematron.Q error 2",
    ]);
    expect(r.findings[0].message).toStartWith("the assert CAST could not be evaluated: FORG0001");
  });

  test("a pattern whose let cannot be evaluated is reported and skipped; the next patterns run", () => {
    const bad = sch(`<sch:pattern id="P1"><sch:let name="p" value="xs:decimal(/order/line/@price)"/>
      <sch:rule context="line"><sch:assert id="A" test="$p > 0">a</sch:assert></sch:rule>
    </sch:pattern>
    <sch:pattern id="P2"><sch:rule context="line"><sch:assert id="Q" test="@qty > 0">q</sch:assert></sch:rule></sch:pattern>`);
    const r = validate(bad, '<order>\n<line price="abc" qty="0"/>\n</order>');
    expect(r.findings.map((f) => `${f.code} ${f.severity}`)).toEqual([
      "schematron.evaluation_error error",
      "schematron.Q error",
    ]);
    expect(r.findings[0].message).toStartWith('the let "p" could not be evaluated: FORG0001');
  });
});
