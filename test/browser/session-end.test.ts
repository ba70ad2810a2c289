// A session that ends while a form is being filled in (its 12 hours are up, or the user signed
// out in another tab): the save is refused (401) and the sign-in form shows. Signed in again as the
// same user, the page comes back as it was, with what was typed in it, to be sent again. It came
// back freshly loaded before: an author's edits to a workflow were lost. Signed in as someone
// else, the page is loaded afresh for them: nothing of the other user's page is kept. A modal
// dialog open at that moment is closed: it stayed over the sign-in form, out of reach behind it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, newPage, setPassword, signIn } from "./browser.ts";

const PASSWORD = "root password 1";

describe.skipIf(!hasChromium)("the session ends while a form is filled in (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer();
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: {
        slug: "orders",
        name: "Orders",
        allowed_file_types: ["JSON"],
        steps: [{ name: "syntax", validator: "syntax", config: {} }],
      },
    });
    expect(r.status).toBe(201);
    await setPassword(s, "root", PASSWORD);
    await s.user("other", "acme", "author");
    await setPassword(s, "other", PASSWORD);
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  const workflow = async () =>
    (await call(s, "GET", "/api/v1/orgs/acme/workflows/orders/", { token: s.rootToken })).json;

  /** The editor with a changed description, then the session ended and Save pressed. */
  async function editThenLoseSession(text: string): Promise<void> {
    page = await newPage(browser, s.url);
    await signIn(page, "root", PASSWORD);
    await page.goto("/app/orgs/acme/workflows/orders/edit");
    await page.getByLabel("Description").fill(text);
    await s.sql("DELETE FROM web_sessions");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("heading", { name: "Sign in to Assay" }).waitFor();
  }

  async function signInAgain(username: string): Promise<void> {
    await page.getByLabel("Username").fill(username);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("header.top").waitFor();
  }

  test("signed in again, the form is back with its input and saves", async () => {
    await editThenLoseSession("Typed before the session ended");
    expect((await workflow()).version).toBe(1);
    await signInAgain("root");
    expect(page.url()).toBe(`${s.url}/app/orgs/acme/workflows/orders/edit`);
    expect(await page.getByLabel("Description").inputValue()).toBe("Typed before the session ended");
    expect(await page.locator("main .notice.info").textContent()).toContain(
      "Signed in again. What you entered on this page is kept: send it again.",
    );
    // The refusal ("Authentication required") the ended session caused is not shown with it.
    expect(await page.locator("main [role=alert]").count()).toBe(0);
    expect(await page.title()).toBe("Edit Orders · Assay");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(/\/app\/orgs\/acme\/workflows\/orders\/$/);
    const w = await workflow();
    expect({ version: w.version, description: w.description }).toEqual({
      version: 2,
      description: "Typed before the session ended",
    });
    await page.context().close();
  });

  test("signed in as another user, the page is loaded afresh", async () => {
    await editThenLoseSession("Typed by root");
    await signInAgain("other");
    await page.getByRole("heading", { name: "Edit “Orders”", level: 1 }).waitFor();
    expect(await page.getByLabel("Description").inputValue()).toBe((await workflow()).description);
    expect((await workflow()).description).toBe("Typed before the session ended");
    expect(await page.locator("header.top a[title=Account]").textContent()).toBe("other");
    expect(await page.locator("main .notice.info").count()).toBe(0);
    await page.context().close();
  });

  test("a dialog open when the session ends does not cover the sign-in form", async () => {
    page = await newPage(browser, s.url);
    await signIn(page, "root", PASSWORD);
    await page.goto("/app/settings/tokens/");
    await page.getByRole("button", { name: "Create token" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Name", { exact: true }).fill("ci");
    await s.sql("DELETE FROM web_sessions");
    await dialog.getByRole("button", { name: "Create token" }).click();
    await page.getByRole("heading", { name: "Sign in to Assay" }).waitFor();
    expect(await page.locator("dialog[open]").count()).toBe(0);
    // A click, as a person's: it reaches the field only when no modal dialog is over it.
    await page.getByLabel("Username").click({ timeout: 2000 });
    await page.keyboard.type("root");
    await page.getByLabel("Password").click({ timeout: 2000 });
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor();
    await page.context().close();
  });
});
