// A list's filters refused by the API (400 with errors[]) are shown in the filter form, next to
// their fields, with what was typed kept. Before, the page became "Something went wrong" without
// the form, and the typed filter was gone from the page.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, rootSignedIn } from "./browser.ts";

describe.skipIf(!hasChromium)("list filters in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer();
    await s.org("acme");
    ({ browser, page } = await rootSignedIn(s, "root password 1"));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("an audit filter the API refuses is shown next to its field, the value kept", async () => {
    const long = "a".repeat(201);
    await page.goto(`/app/orgs/acme/audit/?actor=${long}&action=workflow.*`);
    await page.getByRole("heading", { name: "Audit log", level: 1 }).waitFor();
    const actor = page.getByLabel("Actor (username)");
    const error = page.locator(".field:has([data-field=actor]) .field-error");
    await error.waitFor();
    expect(await error.textContent()).toBe("✖ actor is 1 to 200 characters.");
    expect(await actor.getAttribute("aria-invalid")).toBe("true");
    expect(await actor.inputValue()).toBe(long);
    expect(await page.getByLabel("Action (e.g. workflow.*)").inputValue()).toBe("workflow.*");
    expect(await page.locator(".form-errors").textContent()).toContain("Invalid filters.");
    expect(await page.getByRole("heading", { name: "Something went wrong" }).count()).toBe(0);
    // Corrected in the form, the list appears.
    await actor.fill("root");
    await page.getByLabel("Action (e.g. workflow.*)").fill("");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.getByText("No entries match these filters.").waitFor();
    expect(new URL(page.url()).search).toBe("?actor=root");
    expect(await page.locator(".field-error").count()).toBe(0);
  });

  test("a run filter the API refuses is shown next to its field", async () => {
    await page.goto("/app/orgs/acme/runs/?status=bogus");
    await page.getByRole("heading", { name: "Runs", level: 1 }).waitFor();
    const error = page.locator(".field:has([data-field=status]) .field-error");
    await error.waitFor();
    expect(await error.textContent()).toStartWith("✖ status is one of queued, running");
    expect(await page.getByLabel("Status").getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByRole("heading", { name: "Something went wrong" }).count()).toBe(0);
  });
});
