// The web app's run page over a run with more findings than a run answer carries (issue #19): it
// shows the first 1000, says how many there are, and loads the rest a page at a time from
// …/findings/, each new finding also marked on its line of the content.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, memberSignedIn } from "./browser.ts";

const PASSWORD = "viewer password 1";
const LINES = 1300;

describe.skipIf(!hasChromium)("run page with many findings (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let runId = "";

  beforeAll(async () => {
    s = await startTestServer();
    await createWorkflow(s, s.rootToken, {
      slug: "lines",
      allowed_file_types: ["TEXT"],
      steps: [
        { name: "short lines", validator: "text_rules", config: { max_line_length: 1, max_findings: 2000 } },
      ],
    });
    const text = `${Array.from({ length: LINES }, (_, i) => `line ${i + 1}`).join("\n")}\n`;
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/lines/runs/", {
      token: s.rootToken,
      raw: text,
      headers: { "content-type": "text/plain" },
    });
    expect(r.status).toBe(201);
    runId = r.json.id;
    ({ browser, page } = await memberSignedIn(s, "vera", "acme", "viewer", PASSWORD));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("shows 1000 of 1300 findings, then 200 more, then the last 100", async () => {
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`/app/orgs/acme/runs/${runId}/`);
    await page.getByRole("status").filter({ hasText: "Finished: failed." }).waitFor();
    const rows = page.getByRole("table", { name: "Findings of step 1" }).locator("tbody tr");
    expect(await rows.count()).toBe(1000);
    await page.getByText("Showing 1,000 of 1,300 findings.").waitFor();
    // Line 1001 is not marked yet: its finding has not been loaded.
    expect(await page.locator("#L1001").getAttribute("class")).not.toContain("sev-error");

    await page.getByRole("button", { name: "Show 200 more" }).click();
    await page.getByText("Showing 1,200 of 1,300 findings.").waitFor();
    expect(await rows.count()).toBe(1200);
    expect(await page.locator("#L1001").getAttribute("class")).toContain("sev-error");

    await page.getByRole("button", { name: "Show 100 more" }).click();
    await page.getByRole("table", { name: "Findings of step 1" }).locator("tbody tr").nth(1299).waitFor();
    expect(await rows.count()).toBe(1300);
    expect(await page.getByText(/^Showing .* findings\.$/).count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
