// /api/docs in real Chromium with every request that leaves the server blocked: the API reference
// must come entirely from the binary (an offline install), load the document from the right URL
// (a relative one once resolved to /api/api/v1/openapi.json), and show the operations.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, newPage, screenshot } from "./browser.ts";

describe.skipIf(!hasChromium)("/api/docs in Chromium, offline", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const outside: string[] = [];
  const requested: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    s = await startTestServer();
    browser = await launch();
    page = await newPage(browser, s.url);
    const origin = new URL(s.url).origin;
    // Only the server itself is reachable; anything else is recorded and refused.
    await page.context().route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(`${origin}/`)) {
        requested.push(new URL(url).pathname);
        return route.continue();
      }
      if (url.startsWith("data:")) return route.continue();
      outside.push(url);
      return route.abort("internetdisconnected");
    });
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(String(e)));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("shows every operation, with nothing fetched from outside and no error", async () => {
    await page.goto("/api/docs");
    const doc = await (await fetch(`${s.url}/api/v1/openapi.json`)).json();
    // The API's operations and the deliveries Assay sends (the `webhooks` map), which the page
    // lists in a section of their own.
    const operations = [doc.paths, doc.webhooks]
      .flatMap((map: Record<string, object>) => Object.values(map))
      .flatMap((item) => Object.keys(item)).length;
    await page.locator("#operations-Runs-startRun").waitFor();
    expect(await page.locator(".opblock").count()).toBe(operations);
    await expect(page.locator(".opblock", { hasText: "run.failed" }).count()).resolves.toBe(1);
    await expect(page.locator("#operations-Workflows-listWorkflows").textContent()).resolves.toContain(
      "/api/v1/orgs/{org_slug}/workflows/",
    );
    expect(requested).toContain("/api/v1/openapi.json");
    expect(requested.filter((p) => p.includes("/api/api/"))).toEqual([]);
    expect(outside).toEqual([]);
    expect(problems).toEqual([]);
  });

  test("an operation opens with its request body's media types and its headers", async () => {
    await page.locator("#operations-Runs-startRun .opblock-summary").click();
    const block = page.locator("#operations-Runs-startRun");
    await block.locator(".opblock-body").waitFor();
    const text = (await block.textContent()) ?? "";
    for (const name of ["Idempotency-Key", "Prefer", "X-Filename", "X-Submission-Mode", "Content-Encoding"])
      expect(text).toContain(name);
    const mediaTypes = await block.locator(".body-param-content-type select option").allTextContents();
    expect(mediaTypes).toContain("multipart/form-data");
    expect(mediaTypes).toContain("application/xml");
    expect(text).toContain("Retry-After");
    await screenshot(page, "api-docs", false);
    expect(outside).toEqual([]);
    expect(problems).toEqual([]);
  });

  test("/api/docs/ (with a slash) finds the same document", async () => {
    const other = await newPage(browser, s.url);
    const got: string[] = [];
    other.on("request", (r) => got.push(new URL(r.url()).pathname));
    await other.goto("/api/docs/");
    await other.locator("#operations-Runs-startRun").waitFor();
    expect(got).toContain("/api/v1/openapi.json");
    await other.context().close();
  });
});
