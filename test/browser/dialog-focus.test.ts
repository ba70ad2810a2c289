// Focus after a confirmation dialog whose button goes away: revoking a token redraws the list
// without its Revoke button, and focus, handed back to that button, fell to the document's body
// (a keyboard user started again from the top of the page). It goes to the page's heading, as
// elsewhere when the control that had focus is gone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { call } from "../helpers/server.ts";
import { hasChromium, notesSignedIn } from "./browser.ts";

describe.skipIf(!hasChromium)("focus after a confirmation (Chromium)", () => {
  let page: Page;
  let close = async () => {};

  beforeAll(async () => {
    const started = await notesSignedIn();
    ({ page, close } = started);
    const made = await call(started.s, "POST", "/api/v1/users/me/tokens/", {
      token: started.s.rootToken,
      body: { name: "ci" },
    });
    expect(made.status).toBe(201);
  });
  afterAll(() => close());

  test("a token revoked with the keyboard: focus on the page's heading, not lost", async () => {
    await page.goto("/app/settings/tokens/");
    const revoke = page.getByRole("button", { name: "Revoke token ci" });
    await revoke.focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Revoke token" }).focus();
    await page.keyboard.press("Enter");
    await page.locator("main").getByText("Token “ci” revoked.").waitFor();
    await revoke.waitFor({ state: "detached" });
    await page
      .waitForFunction(() => document.activeElement?.tagName === "H1", undefined, { timeout: 10_000 })
      .catch(() => null);
    expect(
      await page.evaluate(() => `${document.activeElement?.tagName} ${document.activeElement?.textContent}`),
    ).toBe("H1 API tokens");
  });
});
