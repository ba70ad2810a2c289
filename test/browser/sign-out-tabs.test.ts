// Sign out in one tab, and the other tabs of the app stop showing what they showed. The server
// ended the session at once, but another tab kept its page on screen, data and all, until its next
// request: a user who signed out on a shared computer and left another tab open left the data on
// show. Each tab now hears the sign-out (a `storage` event) and reads its session again: signed out,
// the sign-in form (a page with typed input is kept for the same user, as when a session ends);
// another user signed in meanwhile, the page drawn afresh for them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, setPassword, signIn } from "./browser.ts";

const PASSWORD = "root password 1";

describe.skipIf(!hasChromium)("a sign-out in one tab reaches the others (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let ctx: BrowserContext;

  beforeAll(async () => {
    s = await startTestServer();
    await setPassword(s, "root", PASSWORD);
    await createWorkflow(s, s.rootToken, {
      slug: "plan",
      name: "Secret plan",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  async function tab(path: string): Promise<Page> {
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(path);
    await page.locator("main h1").waitFor();
    return page;
  }

  test("the other tab shows the sign-in form, and none of its page", async () => {
    ctx = await browser.newContext({ baseURL: s.url });
    const first = await ctx.newPage();
    first.setDefaultTimeout(15_000);
    await signIn(first, "root", PASSWORD);
    const shown = await tab("/app/orgs/acme/workflows/plan/");
    await shown.getByRole("heading", { name: "Secret plan" }).waitFor();
    await first.getByRole("button", { name: "Sign out" }).click();
    await first.getByLabel("Username").waitFor();
    await shown.getByRole("heading", { name: "Sign in to Assay" }).waitFor();
    expect(await shown.locator("body").textContent()).not.toContain("Secret plan");
    expect(await shown.title()).toBe("Sign in · Assay");
    await ctx.close();
  });

  test("a tab with typed input gets it back when the same user signs in there again", async () => {
    ctx = await browser.newContext({ baseURL: s.url });
    const first = await ctx.newPage();
    first.setDefaultTimeout(15_000);
    await signIn(first, "root", PASSWORD);
    const editor = await tab("/app/orgs/acme/workflows/plan/edit");
    await editor.getByLabel("Description").fill("half written");
    await first.getByRole("button", { name: "Sign out" }).click();
    await editor.getByRole("heading", { name: "Sign in to Assay" }).waitFor();
    expect(await editor.getByLabel("Description").count()).toBe(0);
    await editor.getByLabel("Username").fill("root");
    await editor.getByLabel("Password").fill(PASSWORD);
    await editor.getByRole("button", { name: "Sign in" }).click();
    await editor.getByLabel("Description").waitFor();
    expect(await editor.getByLabel("Description").inputValue()).toBe("half written");
    await ctx.close();
  });
});
