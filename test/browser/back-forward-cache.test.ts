// Back after a sign-out: the browser's back-forward cache keeps a page that was left for another
// site as it was, script state and all, and shows it again on Back without a request. The app's
// HTML carries no data (its API answers are no-store), but the page restored this way still
// showed the workflow it was on after the user signed out in another tab: a Back on a shared
// computer showed the signed-out user's data. The app now hides a restored page until it has
// read the session again: signed out, the sign-in form; the same user, the page as it was (what
// was typed in it kept); another user, the page loaded afresh for them. A server that does not
// answer that read within 10 s: neither the page nor the sign-in form, but "Could not reach the
// server" with a way to try again (it waited forever, the page blank).
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
  async function leaveWorkflowPage(path = "/app/orgs/acme/workflows/plan/", baseURL = s.url): Promise<Page> {
    ctx = await browser.newContext({ baseURL });
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

  test("the server does not answer the session read: after 10 s, not the page but a way to try again", async () => {
    // The app through a proxy of the test's that can hold the session read unanswered (a route of
    // Playwright's does not see the requests of a page restored from the cache).
    let hanging = false;
    let asked!: () => void;
    const reached = new Promise<void>((r) => {
      asked = r;
    });
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const proxy = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      // The held read ends when the test says, not on the proxy's idle timer (10 s by default).
      idleTimeout: 0,
      async fetch(req) {
        const url = new URL(req.url);
        if (hanging && url.pathname === "/api/v1/auth/session/") {
          asked();
          await released;
          return new Response(null, { status: 502 });
        }
        // Identity: Bun's fetch would decompress a gzipped answer and keep its Content-Encoding.
        const headers = new Headers(req.headers);
        headers.set("accept-encoding", "identity");
        return fetch(`${s.url}${url.pathname}${url.search}`, {
          method: req.method,
          headers,
          body: req.body,
          redirect: "manual",
        });
      },
    });
    try {
      const page = await leaveWorkflowPage(undefined, `http://127.0.0.1:${proxy.port}`);
      // The page's clock from now on (its later timers): the 10 s pass when the test says so.
      await page.clock.install();
      await goElsewhere(page);
      hanging = true;
      await back(page);
      await reached;
      expect(await page.evaluate(() => document.getElementById("app")!.hidden)).toBe(true);
      await page.clock.fastForward(10_000);
      await page.getByRole("heading", { name: "Could not reach the server" }).waitFor();
      await page.getByText("The server did not answer within 10 seconds.").waitFor();
      expect(await page.title()).toBe("Server not reachable · Assay");
      expect(await page.getByText("Secret plan").isVisible()).toBe(false);
      expect(await page.evaluate(() => document.getElementById("app")!.hidden)).toBe(true);
      // The server answers again: the page comes back as it was, the notice gone.
      hanging = false;
      await page.getByRole("button", { name: "Try again" }).click();
      await page.waitForFunction(() => !document.getElementById("app")!.hidden, null, { polling: 100 });
      await page.getByRole("heading", { name: "Secret plan" }).waitFor();
      expect(await page.title()).toBe("Secret plan · Assay");
      expect(await page.getByRole("heading", { name: "Could not reach the server" }).count()).toBe(0);
      await ctx.close();
    } finally {
      release();
      proxy.stop(true);
    }
  });
});
