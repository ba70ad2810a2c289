// The schematron validator through the real server: a workflow with a Schematron step is saved
// (the schema compiled at save time), an XML document is run, the findings come back with code,
// message, path, line and column. A broken schema, a missing include or an unknown phase is a 400
// that names the line and saves nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
let author: string;
const base = "/api/v1/orgs/acme/workflows/";

beforeAll(async () => {
  s = await startTestServer();
  author = (await s.user("sam", "acme", "author")).token;
});
afterAll(() => s.close());

const SCHEMA = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">
  <sch:phase id="lines"><sch:active pattern="p-lines"/></sch:phase>
  <sch:pattern id="p-lines">
    <sch:rule context="line">
      <sch:assert id="BR-QTY" test="xs:decimal(@qty) gt 0">Line <sch:value-of select="@sku"/> has quantity <sch:value-of select="@qty"/>.</sch:assert>
    </sch:rule>
  </sch:pattern>
  <sch:pattern id="p-total">
    <sch:rule context="order">
      <sch:assert id="BR-SUM" role="warning" test="sum(line/@qty) = xs:decimal(@count)">count is <sch:value-of select="@count"/></sch:assert>
    </sch:rule>
  </sch:pattern>
</sch:schema>`;

const ORDER = `<order count="5">
  <line sku="a" qty="2"/>
  <line sku="b" qty="0"/>
</order>`;

async function runXml(slug: string, xml: string) {
  const r = await call(s, "POST", `${base}${slug}/runs/`, {
    token: author,
    raw: xml,
    headers: { "content-type": "application/xml", prefer: "wait=30" },
  });
  expect(r.status).toBe(201);
  return r.json;
}

describe("schematron steps over the API", () => {
  test("the validator is in the catalogue with its config schema", async () => {
    const r = await call(s, "GET", "/api/v1/validators/", { token: author });
    const v = r.json.results.find((x: { slug: string }) => x.slug === "schematron");
    expect(v.supported_file_types).toEqual(["XML"]);
    expect(Object.keys(v.config_schema.properties)).toEqual([
      "schema",
      "includes",
      "phase",
      "parameters",
      "max_findings",
      "timeout_ms",
    ]);
  });

  test("201: a saved workflow runs the rules; findings carry id, message, path, line, column, rule", async () => {
    await createWorkflow(s, author, {
      slug: "orders",
      allowed_file_types: ["XML"],
      steps: [{ name: "rules", validator: "schematron", config: { schema: SCHEMA } }],
    });
    const run = await runXml("orders", ORDER);
    expect(run.status).toBe("failed");
    expect(run.summary).toMatchObject({ errors: 1, warnings: 1, infos: 0 });
    expect(run.steps[0].findings).toEqual([
      {
        severity: "error",
        code: "schematron.BR-QTY",
        message: "Line b has quantity 0.",
        path: "/order/line[2]",
        line: 3,
        column: 3,
        rule: "xs:decimal(@qty) gt 0",
      },
      {
        severity: "warning",
        code: "schematron.BR-SUM",
        message: "count is 5",
        path: "/order",
        line: 1,
        column: 1,
        rule: "sum(line/@qty) = xs:decimal(@count)",
      },
    ]);
  });

  test("201: a phase runs only its patterns; a fixed document passes", async () => {
    await createWorkflow(s, author, {
      slug: "orders-lines",
      allowed_file_types: ["XML"],
      steps: [{ name: "rules", validator: "schematron", config: { schema: SCHEMA, phase: "lines" } }],
    });
    const failed = await runXml("orders-lines", ORDER);
    expect(failed.steps[0].findings.map((f: { code: string }) => f.code)).toEqual(["schematron.BR-QTY"]);
    const passed = await runXml("orders-lines", ORDER.replace('qty="0"', 'qty="3"'));
    expect(passed.status).toBe("succeeded");
  });

  const refused = async (slug: string, config: Record<string, unknown>, errors: unknown[]) => {
    const before = await s.count("workflows");
    const r = await call(s, "POST", base, {
      token: author,
      body: {
        slug,
        name: slug,
        allowed_file_types: ["XML"],
        steps: [{ name: "rules", validator: "schematron", config }],
      },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(errorBody(400, "invalid_request", "The workflow definition is invalid.", errors));
    expect(await s.count("workflows")).toBe(before);
  };

  test("400: a schema that is not well-formed names the line", async () => {
    await refused("bad-xml", { schema: SCHEMA.replace("</sch:rule>", "</sch:rul>") }, [
      {
        field: "steps[0].config.schema",
        code: "invalid_schema",
        message: expect.stringMatching(/^is not well-formed XML: line 6: /),
      },
    ]);
  });

  test("400: an XPath error names the line and the expression", async () => {
    await refused("bad-xpath", { schema: SCHEMA.replace("xs:decimal(@qty) gt 0", "xs:decimal(@qty) gt") }, [
      {
        field: "steps[0].config.schema",
        code: "invalid_expression",
        message: expect.stringMatching(
          /^line 5: the assert test "xs:decimal\(@qty\) gt" is not a valid XPath expression/,
        ),
      },
    ]);
  });

  test("400: a function that would read outside the document is refused", async () => {
    await refused(
      "bad-doc",
      { schema: SCHEMA.replace("xs:decimal(@qty) gt 0", "doc('http://example.com/x')") },
      [
        {
          field: "steps[0].config.schema",
          code: "invalid_expression",
          message:
            "line 5: the assert test \"doc('http://example.com/x')\" calls doc(), which would read outside the document: nothing is ever fetched",
        },
      ],
    );
  });

  test("400: an include missing from the config, and an unknown phase", async () => {
    const schema = SCHEMA.replace(
      '<sch:pattern id="p-total">',
      '<sch:include href="more.sch"/>\n  <sch:pattern id="p-total">',
    );
    await refused("bad-include", { schema }, [
      {
        field: "steps[0].config.schema",
        code: "invalid_schema",
        message: 'line 8: includes "more.sch", which is not in the config\'s includes (nothing is fetched)',
      },
    ]);
    await refused("bad-phase", { schema: SCHEMA, phase: "totals" }, [
      {
        field: "steps[0].config.phase",
        code: "unknown_phase",
        message: '"totals" is not a phase of the schema (#ALL, lines)',
      },
    ]);
  });
});
