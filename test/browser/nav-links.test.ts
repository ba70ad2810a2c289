// The navigation of a page whose address names an org with an encoded slash: its links stay
// under that org's address. They were built from the decoded name, so
// /app/orgs/acme%2F..%2F..%2Fadmin/workflows/ offered "Workflows" at /app/admin/workflows/ and
// "Runs" at /app/admin/runs/: an address could point the app's own navigation elsewhere.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, rootSignedIn } from "./browser.ts";

describe.skipIf(!hasChromium)("navigation links of a crafted org address (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer();
    ({ browser, page } = await rootSignedIn(s, "root password 1"));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("every org link stays under the org the address names", async () => {
    const org = "acme%2F..%2F..%2Fadmin";
    await page.goto(`/app/orgs/${org}/workflows/`);
    await page.getByRole("heading", { name: "Not found", level: 1 }).waitFor();
    const nav = page.getByRole("navigation", { name: "Main" }).getByRole("link");
    const paths = await nav.evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).pathname));
    expect(paths).toEqual([
      `/app/orgs/${org}/workflows/`,
      `/app/orgs/${org}/runs/`,
      `/app/orgs/${org}/members/`,
      "/app/admin/",
    ]);
  });
});
