// A refusal takes the keyboard to the field it is about. The run form's "choose a file" went to
// the top of the form, tied to no field, with focus left on the button; refused audit filters
// (the page loads again with them in its address) left focus on the page's heading, away from the
// field that has to change.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import type { TestServer } from "../helpers/server.ts";
import { hasChromium, notesSignedIn } from "./browser.ts";

/** The focused control: its name, whether it is marked invalid, and the text describing it. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLInputElement | null;
    return {
      name: el?.name ?? null,
      invalid: el?.getAttribute("aria-invalid") ?? null,
      described: (el?.getAttribute("aria-describedby") ?? "")
        .split(" ")
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" ")
        .trim(),
    };
  });

describe.skipIf(!hasChromium)("a refused form focuses its field (Chromium)", () => {
  let s: TestServer;
  let page: Page;
  let close = async () => {};

  beforeAll(async () => {
    ({ s, page, close } = await notesSignedIn());
  });
  afterAll(() => close());

  test("a run without a file: the message is by the file field, which is invalid and focused", async () => {
    await page.goto("/app/orgs/acme/workflows/notes/run");
    await page.getByRole("button", { name: "Start run" }).click();
    const error = page.locator(".field:has([data-field=file]) .field-error");
    await error.waitFor();
    expect(await error.textContent()).toBe("✖ Choose a file to upload, or paste the content instead.");
    expect(await focused(page)).toEqual({
      name: "file",
      invalid: "true",
      described: expect.stringContaining("Choose a file to upload, or paste the content instead."),
    });
    const runs = await fetch(`${s.url}/api/v1/orgs/acme/runs/`, {
      headers: { authorization: `Bearer ${s.rootToken}` },
    });
    expect((await runs.json()).count).toBe(0);
  });

  test("refused audit filters: focus on the first refused field, not the heading", async () => {
    await page.goto("/app/orgs/acme/audit/");
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    const action = page.getByLabel("Action (e.g. workflow.*)");
    await action.fill("zzz");
    await action.press("Enter");
    await page.locator(".field:has([name=action]) .field-error").waitFor();
    await page
      .waitForFunction(
        () => (document.activeElement as HTMLInputElement | null)?.name === "action",
        undefined,
        { timeout: 10_000 },
      )
      .catch(() => null);
    expect(await focused(page)).toEqual({
      name: "action",
      invalid: "true",
      described: expect.stringContaining("action is an action such as workflow.update"),
    });
    expect(await action.inputValue()).toBe("zzz");
  });
});
