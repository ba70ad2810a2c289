// Two authors on one workflow: the editor saves with If-Match on the version it was opened at, so
// a save after another author's change is refused (412) and says so, instead of silently putting
// back the old version (a step the other author had just added was removed).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, rootSignedIn } from "./browser.ts";

const PASSWORD = "root password 1";
const STEP = { name: "schema", validator: "json_schema", config: { schema: { type: "object" } } };

describe.skipIf(!hasChromium)("the workflow editor and another author's save", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer();
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
      token: s.rootToken,
      body: { slug: "orders", name: "Orders", allowed_file_types: ["JSON"], steps: [STEP] },
    });
    expect(r.status).toBe(201);
    ({ browser, page } = await rootSignedIn(s, PASSWORD));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  const workflow = async () =>
    (await call(s, "GET", "/api/v1/orgs/acme/workflows/orders/", { token: s.rootToken })).json;

  test("a stale save is refused with a message; the other author's step stays", async () => {
    await page.goto("/app/orgs/acme/workflows/orders/edit");
    const name = page.getByLabel("Name", { exact: true });
    await name.waitFor();
    // Meanwhile another author adds a step (version 2).
    const added = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/steps/", {
      token: s.rootToken,
      body: { ...STEP, name: "second" },
    });
    expect(added.status).toBe(201);
    await name.fill("Orders (renamed)");
    await page.getByRole("button", { name: "Save changes" }).click();
    const error = page.locator(".form-errors");
    await error.waitFor();
    expect(await error.textContent()).toContain("Someone else saved this workflow after you opened it");
    const w = await workflow();
    expect(w.version).toBe(2);
    expect(w.name).toBe("Orders");
    expect(w.steps.map((st: { name: string }) => st.name)).toEqual(["schema", "second"]);
  });

  test("opened again, the editor saves the current version", async () => {
    await page.goto("/app/orgs/acme/workflows/orders/edit");
    const name = page.getByLabel("Name", { exact: true });
    await name.waitFor();
    await name.fill("Orders (renamed)");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(/\/app\/orgs\/acme\/workflows\/orders\/$/);
    const w = await workflow();
    expect(w.version).toBe(3);
    expect(w.name).toBe("Orders (renamed)");
    expect(w.steps.map((st: { name: string }) => st.name)).toEqual(["schema", "second"]);
  });
});
