// The run page offers every report format the API has: the HTML report in a new tab, and JSON,
// JUnit XML and SARIF as downloads. Each is a plain same-origin GET that the session cookie
// authenticates: no token in any URL.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { REPORT_FORMATS } from "../../src/reports/types.ts";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, memberSignedIn } from "./browser.ts";

describe.skipIf(!hasChromium)("a run's reports on its page (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let runId = "";

  beforeAll(async () => {
    s = await startTestServer();
    await createWorkflow(s, s.rootToken, {
      slug: "orders",
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "schema",
          validator: "json_schema",
          config: { schema: { type: "object", required: ["id"] } },
        },
      ],
    });
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
      token: s.rootToken,
      body: { name: "no id" },
    });
    expect(r.status).toBe(201);
    runId = r.json.id;
    ({ browser, page } = await memberSignedIn(s, "vera", "acme", "viewer", "viewer password 1"));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("a link for each format; the downloads are the API's reports, fetched with the session", async () => {
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`/app/orgs/acme/runs/${runId}/`);
    await page.getByRole("status").filter({ hasText: "Finished: failed." }).waitFor();
    const report = (format: string) => `/api/v1/orgs/acme/runs/${runId}/report/?format=${format}`;
    const links = {
      html: "HTML report",
      json: "JSON report",
      junit: "JUnit XML report",
      sarif: "SARIF report",
    };
    // Every format the API offers, and no more.
    expect(Object.keys(links).sort()).toEqual([...REPORT_FORMATS].sort());
    for (const [format, name] of Object.entries(links))
      expect(await page.getByRole("link", { name, exact: true }).getAttribute("href")).toBe(report(format));

    const download = async (name: string) => {
      const [d] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("link", { name, exact: true }).click(),
      ]);
      return { file: d.suggestedFilename(), text: readFileSync((await d.path())!, "utf8") };
    };
    const json = await download("JSON report");
    expect(json.file).toBe(`assay-run-${runId}.json`);
    expect(JSON.parse(json.text)).toMatchObject({ id: runId, status: "failed" });
    const junit = await download("JUnit XML report");
    expect(junit.file).toBe(`assay-run-${runId}.junit.xml`);
    expect(junit.text).toContain("<testsuite");
    expect(junit.text).toContain("json_schema.required");
    const sarif = await download("SARIF report");
    expect(sarif.file).toBe(`assay-run-${runId}.sarif`);
    expect(JSON.parse(sarif.text)).toMatchObject({ version: "2.1.0" });
    // The page stayed where it was.
    expect(new URL(page.url()).pathname).toBe(`/app/orgs/acme/runs/${runId}/`);
    expect(problems).toEqual([]);
  });
});
