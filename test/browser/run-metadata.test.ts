// A run's page shows the submission's metadata (the client's own fields, GET …/runs/{id}/ has
// them), which it once left out; text in it is text, and a bidirectional override in it is shown
// as an escape rather than reordering what the reader sees.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import type { TestServer } from "../helpers/server.ts";
import { hasChromium, notesSignedIn } from "./browser.ts";

describe.skipIf(!hasChromium)("run metadata in Chromium", () => {
  let s: TestServer;
  let page: Page;
  let close = async () => {};

  beforeAll(async () => {
    ({ s, page, close } = await notesSignedIn());
  });
  afterAll(() => close());

  const start = async (metadata?: Record<string, unknown>) => {
    const r = await fetch(`${s.url}/api/v1/orgs/acme/workflows/notes/runs/`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.rootToken}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "hello\n", content_type: "text/plain", metadata }),
    });
    expect(r.status).toBe(201);
    return (await r.json()) as { id: string; submission: { metadata: Record<string, unknown> } };
  };

  test("the metadata the API returns is on the run's page, as text", async () => {
    const metadata = { order: 42, note: "invoice\u202Efdp.exe", html: "<img src=x onerror=alert(1)>" };
    const run = await start(metadata);
    expect(run.submission.metadata).toEqual(metadata);
    await page.goto(`/app/orgs/acme/runs/${run.id}/`);
    const shown = page.locator("pre.metadata");
    await shown.waitFor();
    expect(await shown.textContent()).toBe(
      '{\n  "order": 42,\n  "note": "invoice\\u202efdp.exe",\n  "html": "<img src=x onerror=alert(1)>"\n}',
    );
    expect(await page.locator("main img").count()).toBe(0);
  });

  test("a long line of metadata scrolls in its box, not the page", async () => {
    const run = await start({ ["K".repeat(300)]: "V".repeat(3000) });
    await page.goto(`/app/orgs/acme/runs/${run.id}/`);
    await page.locator("pre.metadata").waitFor();
    const { scroll, view } = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      view: innerWidth,
    }));
    expect(scroll).toBe(view);
  });

  test("a run without metadata has no metadata row", async () => {
    const run = await start();
    await page.goto(`/app/orgs/acme/runs/${run.id}/`);
    await page.getByText("Duration").waitFor();
    expect(await page.getByText("Metadata", { exact: true }).count()).toBe(0);
  });
});
