// The run page follows a run still going by polling it. One poll that failed (a dropped
// connection, a restart behind a proxy, a 429 or 503) ended the polling for good, silently: the
// page said "Running" for ever while the run had long finished (until 2026-11-30). Now it says the
// run could not be refreshed, keeps trying, and shows the run once the server answers again. The
// runs list, refreshed while runs are going, did the same.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type Gate, HOLD_WORKFLOW } from "../helpers/gates.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, rootSignedIn } from "./browser.ts";

describe.skipIf(!hasChromium)("the run page when a poll fails (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let gate: Gate;
  let runId = "";

  beforeAll(async () => {
    s = await startTestServer();
    await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
    gate = s.gates.gate();
    const held = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(held.status).toBe(202);
    runId = held.json.id;
    await gate.held();
    ({ browser, page } = await rootSignedIn(s, "root password 1"));
  });
  afterAll(async () => {
    s?.gates.openAll();
    await browser?.close();
    await s?.close();
  });

  test("a failed poll is said and tried again; the run's end is shown", async () => {
    await page.goto(`/app/orgs/acme/runs/${runId}/`);
    await page
      .getByRole("status")
      .filter({ hasText: /^Running/ })
      .waitFor();
    // The next poll of the run finds no server (the connection reset), the ones after it do.
    let refused = 0;
    await page.route(`**/api/v1/orgs/acme/runs/${runId}/`, async (route) => {
      refused++;
      await route.abort("connectionreset");
    });
    const warning = page.getByText(/^Could not refresh the run/);
    await warning.waitFor();
    await page.unroute(`**/api/v1/orgs/acme/runs/${runId}/`);
    expect(refused).toBeGreaterThan(0);
    gate.open();
    await page.getByRole("status").filter({ hasText: "Finished: succeeded." }).waitFor({ timeout: 30_000 });
    expect(await warning.count()).toBe(0);
  });

  test("the runs list: a failed refresh is said and tried again; the run's end is shown", async () => {
    const second = s.gates.gate();
    const held = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: s.rootToken,
      raw: second.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(held.status).toBe(202);
    await second.held();
    await page.goto("/app/orgs/acme/runs/");
    const row = page.locator("tr", { hasText: held.json.id.slice(-8) });
    await row.getByText("running").waitFor();
    await page.route("**/api/v1/orgs/acme/runs/?*", (route) => route.abort("connectionreset"));
    const warning = page.getByText(/^Could not refresh the list/);
    await warning.waitFor();
    await page.unroute("**/api/v1/orgs/acme/runs/?*");
    second.open();
    await row.getByText("succeeded").waitFor({ timeout: 30_000 });
    expect(await warning.count()).toBe(0);
  });
});
