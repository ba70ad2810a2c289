// A member whose role is lowered while the app is open: the server refuses what the old role
// allowed (403), the page says so, and from then on the app offers only what the new role may do.
// Until 2026-11-30 the app kept the roles it read at sign-in: every page went on offering Edit,
// Deactivate, Delete and New workflow, each a 403, until the browser reloaded the app.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, memberSignedIn } from "./browser.ts";

describe.skipIf(!hasChromium)("a role lowered while the app is open (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer();
    const made = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: {
        slug: "orders",
        name: "Orders",
        allowed_file_types: ["JSON"],
        steps: [{ name: "syntax", validator: "syntax", config: {} }],
      },
    });
    expect(made.status).toBe(201);
    ({ browser, page } = await memberSignedIn(s, "ada", "acme", "author", "author password 1"));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("a refused Deactivate shows the server's message; the next page offers a Viewer's controls", async () => {
    await page.goto("/app/orgs/acme/workflows/orders/");
    await page.getByRole("button", { name: "Deactivate" }).waitFor();
    const lowered = await call(s, "PATCH", "/api/v1/orgs/acme/members/ada/", {
      token: s.rootToken,
      body: { role: "viewer" },
    });
    expect(lowered.status).toBe(200);
    await page.getByRole("button", { name: "Deactivate" }).click();
    await page.getByText("This action needs the author role or higher.").waitFor();
    const w = await call(s, "GET", "/api/v1/orgs/acme/workflows/orders/", { token: s.rootToken });
    expect(w.json.status).toBe("active");
    // Within the app (no reload): the list offers no New workflow, the workflow no Edit.
    await page.getByRole("link", { name: "Workflows", exact: true }).first().click();
    await page.getByRole("heading", { name: "Workflows", level: 1 }).waitFor();
    await page.getByRole("link", { name: "Orders" }).waitFor();
    expect(await page.getByRole("link", { name: "New workflow" }).count()).toBe(0);
    await page.getByRole("link", { name: "Orders" }).click();
    await page.waitForURL(/\/workflows\/orders\/$/);
    await page.getByRole("heading", { name: "Orders", level: 1 }).waitFor();
    for (const name of ["Run", "Edit", "Deactivate", "Delete"])
      expect(
        await page
          .getByRole(name === "Run" || name === "Edit" ? "link" : "button", { name, exact: true })
          .count(),
      ).toBe(0);
    expect(await page.locator("header.top").textContent()).toContain("ACME (viewer)");
  });
});
