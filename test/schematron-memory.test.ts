// A Schematron step that allocates without end is stopped by the server's memory limit
// (src/jobs/memory.ts), not left to take the host's memory until its time limit: one XPath
// doubling a string 30 times took the process to 5.8 GB within a 40 s step before. The limit is
// set a little above what this process uses now; the step's time limit is far beyond what the
// stop takes, so a run that ends `timed_out` means the bound did not work.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const MB = 1048576;
// A limit 600 MB above this process's memory now: the doubling passes it long before its end.
const LIMIT_MB = Math.ceil(process.memoryUsage.rss() / MB) + 600;

beforeAll(async () => {
  s = await startTestServer({ memory_limit_mb: LIMIT_MB });
});
afterAll(() => s.close());

const DOUBLING = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">
  <sch:pattern>
    <sch:rule context="/*">
      <sch:assert id="BIG" test="string-length(fold-left(1 to 32, 'xy', function($a, $i) { concat($a, $a) })) lt 3">too long</sch:assert>
    </sch:rule>
  </sch:pattern>
</sch:schema>`;

test("the step is stopped past the memory limit; the run ends in error and the server goes on", async () => {
  await createWorkflow(s, s.rootToken, {
    slug: "hog",
    allowed_file_types: ["XML"],
    steps: [{ name: "rules", validator: "schematron", config: { schema: DOUBLING, timeout_ms: 300_000 } }],
  });
  const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/hog/runs/", {
    token: s.rootToken,
    raw: "<a/>",
    headers: { "content-type": "application/xml", prefer: "wait=60" },
  });
  const why = `the server's memory passed its limit of ${LIMIT_MB} MB while this step ran: stopped`;
  const run = r.status === 201 ? r.json : await pollFinal(r.json.id);
  expect({ status: run.status, error: run.error }).toEqual({ status: "error", error: why });
  expect(run.steps.map((st: { status: string; error: string | null }) => [st.status, st.error])).toEqual([
    ["error", why],
  ]);
  expect((await call(s, "GET", "/healthz", {})).status).toBe(200);
});

/** A run answered 202 (a slow machine): its final state, polled. */
async function pollFinal(id: string) {
  for (;;) {
    const r = await call(s, "GET", `/api/v1/orgs/acme/runs/${id}/`, { token: s.rootToken });
    if (!["queued", "running"].includes(r.json.status)) return r.json;
    await Bun.sleep(100);
  }
}
