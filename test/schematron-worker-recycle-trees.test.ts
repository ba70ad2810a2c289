// A Schematron expression that may order strings is evaluated as a rewritten parse tree
// (codepoint-order.ts), and fontoxpath keeps every tree it evaluated, by identity: ~120 KB for a
// rule of one assert where its text costs ~2.5 KB. The worker counts those trees too, as they are
// made (treeCost), so the pool's bound (maxRetained, lowered here) holds for configs that compare
// strings: until 2026-11-29 only the compile's count was added (40–60 KB an expression for such
// configs where the bound assumes ~3–10 KB: ~1 GB of heap before the worker was replaced).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const CONFIGS = 3;

const schema = (
  test: string,
) => `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">
  <sch:pattern>
    <sch:rule context="/doc">
      <sch:assert id="A" test="${test}">out of order</sch:assert>
    </sch:rule>
  </sch:pattern>
</sch:schema>`;

beforeAll(async () => {
  s = await startTestServer({ workers: 1 });
  // A config here counts 2 for its compile (the rule's context, the assert); one that compares
  // strings 13 more once its rewritten test has run.
  s.deps.pool!.maxRetained = 40;
  for (let i = 0; i < CONFIGS; i++) {
    // Numbers: nothing rewritten. Strings: `@from` and `@to` are untyped, compared as strings.
    for (const [kind, test] of [
      ["numbers", `count(*) = ${i}`],
      ["strings", `@from &lt;= @to or @n = '${i}'`],
    ] as const)
      await createWorkflow(s, s.rootToken, {
        slug: `${kind}-${i}`,
        allowed_file_types: ["XML"],
        steps: [{ name: "rules", validator: "schematron", config: { schema: schema(test) } }],
      });
  }
});
afterAll(() => s.close());

const run = (slug: string) =>
  call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: '<doc from="a" to="b"/>',
    headers: { "content-type": "application/xml", prefer: "wait=60" },
  });

test("a worker's rewritten expressions count toward its bound: past it, it is replaced", async () => {
  const pool = s.deps.pool!;
  // 3 configs of 2: far below the bound, the worker stays.
  for (let i = 0; i < CONFIGS; i++) {
    const r = await run(`numbers-${i}`);
    expect([r.status, r.json.status]).toEqual([201, i === 0 ? "succeeded" : "failed"]);
  }
  expect(pool.recycledWorkers).toBe(0);
  // 6, then 3 configs of 2 + 13: 21, 36, 51 > 40 — replaced after the third.
  for (let i = 0; i < CONFIGS; i++) {
    const r = await run(`strings-${i}`);
    expect([r.status, r.json.status]).toEqual([201, "succeeded"]);
  }
  expect(pool.recycledWorkers).toBe(1);
});
