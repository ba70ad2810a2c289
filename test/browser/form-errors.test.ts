// A server error shown next to its field reads as one sentence: a message that already names its
// field ("filename may not contain …") was prefixed with the field's name again ("filename
// filename may not contain …"); a bare one ("is required") still gets its subject. An error for a
// field folded away (a step's Limits) unfolds it: the message was put there unseen, and focus,
// which a hidden field cannot take, fell to the page (until 2026-11-30).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import type { TestServer } from "../helpers/server.ts";
import { hasChromium, notesSignedIn } from "./browser.ts";

describe.skipIf(!hasChromium)("form errors in Chromium", () => {
  let s: TestServer;
  let page: Page;
  let close = async () => {};

  beforeAll(async () => {
    ({ s, page, close } = await notesSignedIn());
  });
  afterAll(() => close());

  test("a refused file name is shown once next to its field, the input kept", async () => {
    await page.goto("/app/orgs/acme/workflows/notes/run");
    await page.getByLabel("Paste content").check();
    await page.getByLabel("Content", { exact: true }).fill("hello\n");
    const filename = page.getByLabel("File name (optional)");
    await filename.fill("a/b.txt");
    await page.getByRole("button", { name: "Start run" }).click();
    const error = page.locator(".field:has([data-field=filename]) .field-error");
    await error.waitFor();
    expect(await error.textContent()).toBe(
      "✖ filename may not contain control characters (bidirectional ones too), line separators, unpaired surrogates or path separators.",
    );
    expect(await filename.getAttribute("aria-invalid")).toBe("true");
    expect(await filename.inputValue()).toBe("a/b.txt");
    expect(await page.getByLabel("Content", { exact: true }).inputValue()).toBe("hello\n");
    const runs = await fetch(`${s.url}/api/v1/orgs/acme/runs/`, {
      headers: { authorization: `Bearer ${s.rootToken}` },
    });
    expect((await runs.json()).count).toBe(0);
  });

  test("a refused step limit unfolds the step's Limits, shows its message and takes focus", async () => {
    await page.goto("/app/orgs/acme/workflows/notes/edit");
    const limits = page.locator("details.limits").first();
    await limits.locator("summary").click();
    const max = page.getByLabel("Max findings");
    await max.fill("99999999");
    // Folded again before saving, as a user does once the value is typed.
    await limits.locator("summary").click();
    expect(await limits.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    await page.getByRole("button", { name: "Save changes" }).click();
    const error = limits.locator(".field-error");
    await error.waitFor();
    expect(await error.textContent()).toBe("✖ max_findings must be an integer from 1 to 10000");
    expect(await limits.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    expect(await error.isVisible()).toBe(true);
    expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.field)).toBe(
      "steps[0].config.max_findings",
    );
    const w = await fetch(`${s.url}/api/v1/orgs/acme/workflows/notes/`, {
      headers: { authorization: `Bearer ${s.rootToken}` },
    });
    expect((await w.json()).version).toBe(1);
  });

  test("an error inside a JSON field names its item from the field's own name", async () => {
    await page.goto("/app/orgs/acme/workflows/notes/edit");
    const patterns = page.locator('[data-field="steps[0].config.patterns"]');
    await patterns.fill(JSON.stringify([{ regex: "a", must: "maybe", message: "m" }]));
    await page.getByRole("button", { name: "Save changes" }).click();
    const error = page.locator(".field:has([data-field='steps[0].config.patterns']) .field-error");
    await error.waitFor();
    // It read "[0].must must be …": the item without the list it is an item of.
    expect(await error.textContent()).toBe("✖ patterns[0].must must be equal to one of the allowed values");
  });
});
