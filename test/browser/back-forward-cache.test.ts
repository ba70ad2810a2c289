// Back after a sign-out: the browser's back-forward cache keeps a page that was left for another
// site as it was, script state and all, and shows it again on Back without a request. The app's
// HTML carries no data (its API answers are no-store), but the page restored this way still
// showed the workflow it was on after the user signed out in another tab: a Back on a shared
// computer showed the signed-out user's data. The app now hides a restored page until it has
// read the session again: signed out, the sign-in form; the same user, the page as it was (what
// was typed in it kept); another user, the page loaded afresh for them.
// Playwright turns the cache off by default (--disable-back-forward-cache): it is on here, as in
// a user's Chromium. Each test checks that the page really came from the cache (a value the test
// left on `window` is still there), so none passes because the page was loaded again instead.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Browser, type BrowserContext, type Page, chromium } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { CHROMIUM, hasChromium, setPassword, signIn } from "./browser.ts";

const PASSWORD = "root password 1";

describe.skipIf(!hasChromium)("a page restored by Back from the back-forward cache (Chromium)", () => {
  let s: TestServer;
  let elsewhere: ReturnType<typeof Bun.serve>;
  let browser: Browser;
  let ctx: BrowserContext;

  beforeAll(async () => {
    s = await startTestServer();
    await setPassword(s, "root", PASSWORD);
    await s.user("mallory", "acme", "viewer");
    await setPassword(s, "mallory", PASSWORD);
    await createWorkflow(s, s.rootToken, {
      slug: "plan",
      name: "Secret plan",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    // Another site to leave for (localhost, not 127.0.0.1: another site, not just another origin).
    elsewhere = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () =>
        new Response("<!doctype html><title>Elsewhere</title><p>Elsewhere</p>", {
          headers: { "content-type": "text/html" },
        }),
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      ignoreDefaultArgs: ["--disable-back-forward-cache"],
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"],
    });
  });
  afterAll(async () => {
    await browser?.close();
    elsewhere?.stop(true);
    await s?.close();
  });

  /** Root signed in on the workflow's page, a mark left on it, then off to another site. */
  async function leaveWorkflowPage(path = "/app/orgs/acme/workflows/plan/"): Promise<Page> {
    ctx = await browser.newContext({ baseURL: s.url });
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await signIn(page, "root", PASSWORD);
    await page.goto(path);
    await page.locator("main h1").waitFor();
    await page.evaluate(() => {
      (window as unknown as { mark: number }).mark = 1;
    });
    return page;
  }

  async function goElsewhere(page: Page): Promise<void> {
    await page.goto(`http://localhost:${elsewhere.port}/`);
    await page.getByText("Elsewhere").waitFor();
  }

  /** Back; the page must be the one the cache kept (the load event does not fire for it). */
  async function back(page: Page): Promise<void> {
    await page.goBack({ waitUntil: "commit" });
    await page.waitForFunction(() => location.pathname.startsWith("/app/"));
    expect(await page.evaluate(() => (window as unknown as { mark?: number }).mark)).toBe(1);
  }

  /** Signs out (or in as `as`) in a second tab of the same browser. */
  async function otherTab(as?: string): Promise<void> {
    const tab = await ctx.newPage();
    await tab.goto("/app/settings/account/");
    await tab.locator("header.top").waitFor();
    await tab.getByRole("button", { name: "Sign out" }).click();
    await tab.getByLabel("Username").waitFor();
    if (as) {
      await tab.getByLabel("Username").fill(as);
      await tab.getByLabel("Password").fill(PASSWORD);
      await tab.getByRole("button", { name: "Sign in" }).click();
      await tab.locator("header.top").waitFor();
    }
    await tab.close();
  }

  test("signed out in another tab meanwhile: Back shows the sign-in form, not the page's data", async () => {
    const page = await leaveWorkflowPage();
    await goElsewhere(page);
    await otherTab();
    await back(page);
    await page.getByRole("heading", { name: "Sign in to Assay" }).waitFor();
    expect(await page.locator("body").textContent()).not.toContain("Secret plan");
    expect(await page.title()).toBe("Sign in · Assay");
    await ctx.close();
  });

  test("another user signed in meanwhile: the page is loaded afresh, as theirs", async () => {
    const page = await leaveWorkflowPage("/app/orgs/acme/workflows/plan/edit");
    await goElsewhere(page);
    await otherTab("mallory");
    await back(page);
    // The editor is an Author's page: a Viewer is told so, and shown none of it.
    await page.getByRole("heading", { name: "Not allowed" }).waitFor();
    expect(await page.locator("header.top").textContent()).toContain("mallory");
    expect(await page.getByLabel("Description").count()).toBe(0);
    await ctx.close();
  });

  test("still signed in as the same user: the page comes back as it was, with what was typed", async () => {
    const page = await leaveWorkflowPage("/app/orgs/acme/workflows/plan/edit");
    await page.getByLabel("Description").fill("half written");
    await goElsewhere(page);
    await back(page);
    await page.waitForFunction(() => !document.getElementById("app")!.hidden);
    expect(await page.getByLabel("Description").inputValue()).toBe("half written");
    expect(await page.getByRole("heading", { name: "Sign in to Assay" }).count()).toBe(0);
    await ctx.close();
  });
});
