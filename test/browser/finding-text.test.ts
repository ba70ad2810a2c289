// A finding's message and the submitted content on the run page show bidirectional controls as
// `\uNNNN`, as the HTML report and `assay validate` do: obeyed, U+202E made text read as its
// reverse; the content viewer warns, as code review tools do ("Trojan Source"). A finding's path
// too: it names the document's own keys, and was shown with the override obeyed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, memberSignedIn } from "./browser.ts";

const PASSWORD = "viewer password 1";

describe.skipIf(!hasChromium)("finding messages on the run page (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let runId = "";

  beforeAll(async () => {
    s = await startTestServer();
    await createWorkflow(s, s.rootToken, {
      slug: "shape",
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "shape",
          validator: "json_schema",
          config: { schema: { type: "object", additionalProperties: false } },
        },
      ],
    });
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/shape/runs/", {
      token: s.rootToken,
      raw: JSON.stringify({ "ok\u202e1000": 1 }),
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(201);
    runId = r.json.id;
    ({ browser, page } = await memberSignedIn(s, "vera", "acme", "viewer", PASSWORD));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("an override in the message is shown, not obeyed", async () => {
    await page.goto(`/app/orgs/acme/runs/${runId}/`);
    await page.getByRole("status").filter({ hasText: "Finished: failed." }).waitFor();
    const cell = page.getByRole("table", { name: "Findings of step 1" }).locator("tbody tr td").nth(2);
    const text = await cell.textContent();
    expect(text).toContain("ok\\u202e1000");
    expect(text).not.toContain("\u202e");
  });

  test("an override in the path that names the document's key is shown, not obeyed", async () => {
    const cell = page.getByRole("table", { name: "Findings of step 1" }).locator("tbody tr td").nth(3);
    expect(await cell.locator("code").textContent()).toBe("/ok\\u202e1000");
  });

  test("the content viewer shows it the same way, under a warning", async () => {
    const viewer = page.getByRole("region", { name: "Submitted content" });
    await viewer.waitFor();
    const text = await viewer.textContent();
    expect(text).toContain('{"ok\\u202e1000":1}');
    expect(text).not.toContain("\u202e");
    await page
      .getByRole("status")
      .filter({ hasText: "This content holds bidirectional Unicode controls or line separators" })
      .waitFor();
  });
});
