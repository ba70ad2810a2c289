// A step's configuration on the workflow page, a version's page and its diff, and the audit log's
// details (a description's change) show bidirectional controls as `\uNNNN`, as finding messages and content do
// (finding-text.test.ts): those pages are where a change is reviewed, and a CEL string literal
// holding U+202E read as its reverse there ("Trojan Source"), the rule meaning other than it read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, rootSignedIn } from "./browser.ts";

const PASSWORD = "root password 12";
const rules = (literal: string) => ({
  rules: [{ id: "role", expr: `data.role != "${literal}"`, message: "not for admins" }],
});

describe.skipIf(!hasChromium)("bidirectional controls in configurations (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let wfId = 0;

  beforeAll(async () => {
    s = await startTestServer();
    const w = await createWorkflow(s, s.rootToken, {
      slug: "roles",
      allowed_file_types: ["JSON"],
      steps: [{ name: "who", validator: "assertions", config: rules("admin") }],
    });
    wfId = w.id;
    const r = await call(s, "PATCH", `/api/v1/orgs/acme/workflows/roles/steps/${w.steps[0].id}/`, {
      token: s.rootToken,
      body: { config: rules("nimda\u202e \u2066x\u2069") },
    });
    expect(r.status).toBe(200);
    // A description may hold them (docs/limits.md); the audit log records it, not the configs.
    const d = await call(s, "PATCH", "/api/v1/orgs/acme/workflows/roles/", {
      token: s.rootToken,
      body: { description: "nimda\u202e \u2066x\u2069" },
    });
    expect(d.status).toBe(200);
    ({ browser, page } = await rootSignedIn(s, PASSWORD));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  const shown = async (text: string | null) => {
    expect(text).toContain("nimda\\u202e \\u2066x\\u2069");
    expect(text).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  };

  test("the workflow page's configuration", async () => {
    await page.goto("/app/orgs/acme/workflows/roles/");
    await page.getByText("Configuration").first().click();
    await shown(await page.locator("main pre.code-block").first().textContent());
  });

  test("a version's configuration and the diff from the version before", async () => {
    await page.goto(`/app/orgs/acme/workflows/${wfId}/versions/2/`);
    const diff = page.getByRole("table", { name: "Changes from version 1 to 2" });
    await diff.waitFor();
    await shown(await diff.locator("tbody").textContent());
    await page.getByText("Configuration").first().click();
    await shown(await page.locator("main pre.code-block").first().textContent());
  });

  test("the audit log's details", async () => {
    await page.goto("/app/orgs/acme/audit/?action=workflow.update");
    const rows = page.getByRole("table", { name: "Audit log" }).locator("tbody tr");
    await rows.first().waitFor();
    await rows.first().getByText("Details").click();
    await shown(await rows.first().locator("pre").textContent());
  });
});
