// The web app's workflow history (issue 24) in Chromium: a run page links the version it ran; the
// history lists every version; a version's page shows what changed, field by field; an Author
// restores an old version from it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { SYSTEM } from "../../src/audit/actor.ts";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, newPage, screenshot, signIn } from "./browser.ts";

const PASSWORD = "author password 1";
const schema = (required: string[]) => ({ schema: { type: "object", required } });

describe.skipIf(!hasChromium)("workflow history (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let wfId = 0;
  let stepId = 0;
  let runId = "";

  beforeAll(async () => {
    s = await startTestServer();
    const ann = await s.user("ann", "acme", "author");
    await s.deps.users.setPassword(ann.id, await Bun.password.hash(PASSWORD), SYSTEM);
    // Version 1 requires id; version 2 also total.
    const w = await createWorkflow(s, ann.token, {
      slug: "orders",
      name: "Orders",
      allowed_file_types: ["JSON"],
      steps: [{ name: "shape", validator: "json_schema", config: schema(["id"]) }],
    });
    wfId = w.id;
    stepId = w.steps[0].id;
    await call(s, "PATCH", `/api/v1/orgs/acme/workflows/orders/steps/${stepId}/`, {
      token: ann.token,
      body: { config: schema(["id", "total"]) },
    });
    const run = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/?version=1", {
      token: s.rootToken,
      raw: '{"id": 1}',
      headers: { "content-type": "application/json" },
    });
    expect(run.json.status).toBe("succeeded");
    runId = run.json.id;
    browser = await launch();
    page = await newPage(browser, s.url);
    await signIn(page, "ann", PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("the run page links the version it ran; that page shows version 1", async () => {
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`/app/orgs/acme/runs/${runId}/`);
    await page.getByRole("link", { name: "version 1", exact: true }).click();
    await page.getByRole("heading", { name: "Version 1" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/app/orgs/acme/workflows/${wfId}/versions/1/`);
    await page.getByText("The first version: nothing before it to compare with.").waitFor();
    expect(problems).toEqual([]);
  });

  test("the history lists the versions; version 2's page shows the diff field by field", async () => {
    await page.goto("/app/orgs/acme/workflows/orders/");
    await page.getByRole("link", { name: "History" }).click();
    const rows = page.getByRole("table", { name: "Versions" }).locator("tbody tr");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    await page.getByRole("link", { name: "Changes from 1" }).click();
    const diff = page.getByRole("table", { name: "Changes from version 1 to 2" });
    await diff.waitFor();
    const cells = await diff.locator("tbody tr").first().locator("td").allInnerTexts();
    expect(cells.map((c) => c.trim())).toEqual([
      `/steps/${stepId}/config/schema/required/1\nstep “shape” (id ${stepId})`,
      "Added",
      "—",
      '"total"',
    ]);
    await screenshot(page, "workflow-history");
  });

  test("an Author restores version 1: a new version 3, equal to version 1", async () => {
    await page.goto(`/app/orgs/acme/workflows/${wfId}/versions/1/`);
    await page.getByRole("button", { name: "Restore version 1" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Restore" }).click();
    await page.getByRole("heading", { name: "Version 3" }).waitFor();
    await page.locator("main").getByText("Version 1 restored as version 3.").waitFor();
    const w = await call(s, "GET", "/api/v1/orgs/acme/workflows/orders/", { token: s.rootToken });
    expect(w.json.version).toBe(3);
    expect(w.json.steps[0].config).toEqual(schema(["id"]));
  });

  test("an org Admin reads the audit log, filters it and exports it; an Author has no link", async () => {
    expect(await page.getByRole("link", { name: "Audit log" }).count()).toBe(0);
    const ada = await s.user("ada", "acme", "admin");
    await s.deps.users.setPassword(ada.id, await Bun.password.hash(PASSWORD), SYSTEM);
    const admin = await newPage(browser, s.url);
    await signIn(admin, "ada", PASSWORD);
    await admin.goto("/app/orgs/acme/workflows/");
    await admin.getByRole("link", { name: "Audit log" }).click();
    const rows = admin.getByRole("table", { name: "Audit log" }).locator("tbody tr");
    await rows.first().waitFor();
    await admin.getByLabel("Action (e.g. workflow.*)").fill("workflow.restore");
    await admin.getByRole("button", { name: "Apply filters" }).click();
    await admin.waitForURL(/action=workflow\.restore/);
    // The filtered page replaces the whole list: one row left.
    await admin.waitForFunction(() => document.querySelectorAll("table tbody tr").length === 1);
    expect(await rows.first().textContent()).toContain("ann");
    const href = await admin.getByRole("link", { name: "Export CSV" }).getAttribute("href");
    expect(href).toBe("/api/v1/orgs/acme/audit/?action=workflow.restore&format=csv");
    // The session cookie authenticates the download.
    const csv = await admin.evaluate(async (u) => (await fetch(u!)).text(), href);
    expect(csv.trimEnd().split("\r\n")).toHaveLength(2);
    await screenshot(admin, "audit-log");
    await admin.close();
  });
});
