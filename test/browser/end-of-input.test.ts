// A finding at the end of the input: a truncated document that ends with a newline is refused on
// the line after it ("line 2, column 1" for `{"id": 1,⏎`), the empty line a text editor shows
// after the last newline. The run page's content viewer left that line out, so the commonest
// syntax error was marked on no line and its location link went nowhere (until 2026-11-30).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, memberSignedIn } from "./browser.ts";

describe.skipIf(!hasChromium)("a finding on the line after the last newline (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let runId = "";

  beforeAll(async () => {
    s = await startTestServer();
    await createWorkflow(s, s.rootToken, {
      slug: "orders",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
      token: s.rootToken,
      raw: '{"id": 1,\n',
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(201);
    expect(r.json.steps[0].findings.map((f: { line: number; column: number }) => [f.line, f.column])).toEqual(
      [[2, 1]],
    );
    runId = r.json.id;
    ({ browser, page } = await memberSignedIn(s, "vera", "acme", "viewer", "viewer password 1"));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("the empty last line is shown, marked, and its location link goes to it", async () => {
    await page.goto(`/app/orgs/acme/runs/${runId}/`);
    await page.getByRole("status").filter({ hasText: "Finished: failed." }).waitFor();
    const viewer = page.getByRole("region", { name: "Submitted content" });
    expect(await viewer.locator(".ln-row").count()).toBe(2);
    expect(await page.locator("#L2").getAttribute("class")).toContain("sev-error");
    expect(await viewer.locator(".annot").count()).toBe(1);
    await page.getByRole("link", { name: "line 2, column 1" }).click();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("L2");
    expect(page.url()).toEndWith("#L2");
  });

  test("content that ends with a newline and has no finding there shows no empty line", async () => {
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
      token: s.rootToken,
      raw: '{"id": 1}\n',
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(201);
    await page.goto(`/app/orgs/acme/runs/${r.json.id}/`);
    await page.getByRole("status").filter({ hasText: "Finished: succeeded." }).waitFor();
    expect(await page.getByRole("region", { name: "Submitted content" }).locator(".ln-row").count()).toBe(1);
  });
});
