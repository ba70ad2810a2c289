// A list's filters refused by the API (400 with errors[]) are shown in the filter form, next to
// their fields, with what was typed kept. Before, the page became "Something went wrong" without
// the form, and the typed filter was gone from the page.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, rootSignedIn, signIn } from "./browser.ts";

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

  test("a time filter the API refuses is shown by its field, and no list is shown as if filtered", async () => {
    for (const field of ["created_after", "created_before"]) {
      await page.goto(`/app/orgs/acme/runs/?${field}=garbage`);
      const error = page.locator(`.field:has([data-field=${field}]) .field-error`);
      await error.waitFor();
      expect(await error.textContent()).toBe(`✖ ${field} must be an ISO 8601 date or date-time.`);
      expect(await page.locator(`[data-field=${field}]`).getAttribute("aria-invalid")).toBe("true");
      expect(await page.getByText("No runs match these filters.").count()).toBe(0);
      expect(await page.getByRole("table").count()).toBe(0);
    }
  });

  // A time without an offset is UTC to the API (src/lib/filter-time.ts); the page read it in the
  // browser's zone, so in Berlin `created_after=2026-11-29T10:00` showed 10:00 (09:00 UTC) over a
  // list filtered from 10:00 UTC, and Apply filters moved the filter an hour.
  test("a time filter in the address is shown as the instant the API filters by, and Apply keeps it", async () => {
    const ctx = await browser.newContext({ baseURL: s.url, timezoneId: "Europe/Berlin" });
    const berlin = await ctx.newPage();
    berlin.setDefaultTimeout(15_000);
    await signIn(berlin, "root", "root password 1");
    for (const [value, shown, applied] of [
      ["2026-11-29T10:00", "2026-11-29T11:00", "2026-11-29T10:00:00.000Z"],
      ["2026-11-29 10:00", "2026-11-29T11:00", "2026-11-29T10:00:00.000Z"],
      ["2026-11-29T10:00:00+0200", "2026-11-29T09:00", "2026-11-29T08:00:00.000Z"],
      ["2026-11-29", "2026-11-29T01:00", "2026-11-29T00:00:00.000Z"],
    ]) {
      await berlin.goto(`/app/orgs/acme/runs/?created_after=${encodeURIComponent(value!)}`);
      await berlin.getByText("No runs match these filters.").waitFor();
      expect([value, await berlin.getByLabel("Created after").inputValue()]).toEqual([value, shown]);
      await berlin.getByRole("button", { name: "Apply filters" }).click();
      await berlin.waitForURL((u) => u.searchParams.get("created_after") !== value);
      expect([value, new URL(berlin.url()).searchParams.get("created_after")]).toEqual([value, applied]);
    }
    await ctx.close();
  });
});
