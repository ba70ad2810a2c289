// Long unbroken text from users (a 200-character name, a 5000-character description, a long file
// name) wraps inside the page: it once widened the workflow page to 73,846 px and a run's page to
// 3,376 px, so every line of the page had to be scrolled sideways. Tables keep scrolling inside
// their own frame. The screen-reader-only text in a table or a content viewer stays inside its
// scrolling box: the "Actions" heading of a wide table once widened the tokens page to 1396 px and
// the users page to 2196 px, and a finding on line 3001 made a run's page 56,119 px tall.
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
  let longRunId: string;

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
    const post = (path: string, body: unknown) =>
      fetch(`${s.url}/api/v1/${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.rootToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await post("users/me/tokens/", { name: "T".repeat(100) })).status).toBe(201);
    expect((await post("admin/users/", { username: "longname", name: NAME })).status).toBe(201);
    const long = await post("orgs/acme/workflows/long/runs/", {
      content: `${"ok\n".repeat(3000)}too long\n`,
      content_type: "text/plain",
    });
    expect(long.status).toBe(201);
    longRunId = (await long.json()).id;
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

  test("a table wider than the window scrolls in its frame, not the page", async () => {
    for (const [path, text] of [
      ["/app/settings/tokens/", "TTTT"],
      ["/app/admin/", "WWWW"],
    ] as const) {
      await page.goto(path);
      await page.locator("table td").filter({ hasText: text }).first().waitFor();
      const { scroll, view } = await pageWidth();
      expect({ path, scroll }).toEqual({ path, scroll: view });
    }
  });

  test("a finding far down a long document does not lengthen the run's page", async () => {
    await page.goto(`/app/orgs/acme/runs/${longRunId}/`);
    await page.locator("#L3001").waitFor({ state: "attached" });
    const { scroll, app } = await page.evaluate(() => ({
      scroll: document.documentElement.scrollHeight,
      app: Math.ceil(document.getElementById("app")!.getBoundingClientRect().bottom + scrollY),
    }));
    expect(scroll).toBeLessThanOrEqual(app);
  });
});
