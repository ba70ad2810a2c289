// Long unbroken text from users (a 200-character name, a 5000-character description, a long file
// name) wraps inside the page: it once widened the workflow page to 73,846 px and a run's page to
// 3,376 px, so every line of the page had to be scrolled sideways. Tables keep scrolling inside
// their own frame.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { SYSTEM } from "../../src/audit/actor.ts";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, rootSignedIn } from "./browser.ts";

const NAME = "W".repeat(200);
const DESCRIPTION = "W".repeat(5000);
const FILENAME = `${"F".repeat(240)}.txt`;

describe.skipIf(!hasChromium)("long text in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let runId: string;

  beforeAll(async () => {
    s = await startTestServer();
    const acme = await s.org("acme");
    await s.deps.workflows.create(
      acme,
      {
        slug: "long",
        name: NAME,
        description: DESCRIPTION,
        allowed_file_types: ["TEXT"],
        steps: [{ name: NAME, validator: "text_rules", config: { max_line_length: 3 } }],
      },
      SYSTEM,
    );
    const r = await fetch(`${s.url}/api/v1/orgs/acme/workflows/long/runs/`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.rootToken}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "too long\n", content_type: "text/plain", filename: FILENAME }),
    });
    expect(r.status).toBe(201);
    runId = (await r.json()).id;
    ({ browser, page } = await rootSignedIn(s, "root password 1"));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  const pageWidth = () =>
    page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, view: innerWidth }));

  test("a workflow's page, its editor and its history are as wide as the window", async () => {
    for (const path of [
      "/app/orgs/acme/workflows/long/",
      "/app/orgs/acme/workflows/long/edit",
      "/app/orgs/acme/workflows/long/versions/",
    ]) {
      await page.goto(path);
      await page.locator("main h1").filter({ hasText: "WWWW" }).waitFor();
      const { scroll, view } = await pageWidth();
      expect({ path, scroll }).toEqual({ path, scroll: view });
    }
  });

  test("a run's page with a long step name and file name is as wide as the window", async () => {
    await page.goto(`/app/orgs/acme/runs/${runId}/`);
    await page.getByRole("heading", { name: /^1\. W+/ }).waitFor();
    const { scroll, view } = await pageWidth();
    expect(scroll).toBe(view);
  });
});
