// The webhooks page in Chromium: a webhook added there shows its secret once and appears in the
// list at once (the list was left as it was until the page was reloaded).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, rootSignedIn } from "./browser.ts";

const PASSWORD = "root password 1";

describe.skipIf(!hasChromium)("the webhooks page", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer({ webhook_allow_private: true });
    ({ browser, page } = await rootSignedIn(s, PASSWORD));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("a new webhook is listed at once, and its secret stays shown", async () => {
    await page.goto("/app/orgs/acme/webhooks/");
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    expect(await page.getByText("No webhooks yet.").count()).toBe(1);
    await page.getByLabel("Payload URL").fill("http://127.0.0.1:9/hook-new");
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByText("Webhook created").waitFor();
    const row = page.locator("table").getByRole("link", { name: "http://127.0.0.1:9/hook-new" });
    await row.waitFor();
    expect(await page.getByText("No webhooks yet.").count()).toBe(0);
    expect(await page.getByLabel("Signing secret").inputValue()).toMatch(/^whsec_/);
  });
});
