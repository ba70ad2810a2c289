// Long lists in the web app: every row can be reached. The lists once asked for one page of 200
// (the API's largest) and showed no pager, so row 201 could not be seen or acted on; now each
// shows 50 a page with Previous/Next, and the runs page's workflow filter reads every page.
import { SYSTEM } from "../../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, newPage, signIn } from "./browser.ts";

const PASSWORD = "root password 1";
const pad = (i: number) => String(i).padStart(3, "0");

describe.skipIf(!hasChromium)("long lists in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer();
    const d = s.deps;
    const root = (await d.users.getByUsername("root"))!;
    await d.users.setPassword(root.id, await Bun.password.hash(PASSWORD), SYSTEM);
    const acme = await s.org("acme");
    // 201 users besides root; the first 50 also members of acme (51 members with root).
    for (let i = 1; i <= 201; i++) {
      const u = await d.users.create({ username: `u${pad(i)}` }, SYSTEM);
      if (i <= 50) await d.orgs.addMember(acme, u.id, "viewer", SYSTEM);
    }
    // 51 orgs with acme; 51 tokens of root with the harness's; 201 workflows in acme.
    for (let i = 1; i <= 50; i++) await d.orgs.create(`org-${pad(i)}`, `Org ${i}`, SYSTEM);
    for (let i = 1; i <= 50; i++) await d.tokens.create(root.id, `t${pad(i)}`, null, SYSTEM);
    for (let i = 1; i <= 201; i++)
      await d.workflows.create(
        acme,
        { slug: `wf-${pad(i)}`, name: `Workflow ${pad(i)}`, allowed_file_types: ["JSON"], steps: [] },
        SYSTEM,
      );
    browser = await launch();
    page = await newPage(browser, s.url);
    await signIn(page, "root", PASSWORD);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  const firstColumn = () => page.locator("table tbody tr td:first-child").allTextContents();
  const pagerText = () => page.locator("nav.pager span").textContent();
  /** Opens `path` and waits for its pager, then returns the page's first column. */
  async function open(path: string, pages: number) {
    await page.goto(path);
    await page.getByText(new RegExp(`^Page 1 of ${pages} `)).waitFor();
    return firstColumn();
  }
  async function next(n: number, pages: number) {
    await page.getByRole("link", { name: "Next →" }).click();
    await page.getByText(new RegExp(`^Page ${n} of ${pages} `)).waitFor();
    return firstColumn();
  }

  test("the admin's user list pages through all 202 users; user 201 can be deleted", async () => {
    const seen = await open("/app/admin/", 5);
    expect(seen.length).toBe(50);
    for (let n = 2; n <= 5; n++) seen.push(...(await next(n, 5)));
    expect(await pagerText()).toBe("Page 5 of 5 (202 items)");
    expect(await page.getByRole("link", { name: "Next →" }).count()).toBe(0);
    expect(seen).toEqual(["root", ...Array.from({ length: 201 }, (_, i) => `u${pad(i + 1)}`)]);

    await page.getByRole("row", { name: /u201/ }).getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.locator("main").getByText("User u201 deleted.").waitFor();
    expect(await firstColumn()).toEqual(["u200"]);
    expect(await s.deps.users.getByUsername("u201")).toBeNull();
  });

  test("a page past the end links back to the last page", async () => {
    await page.goto("/app/admin/?page=99");
    const prev = page.getByRole("link", { name: "← Previous" });
    await prev.waitFor();
    expect(await prev.getAttribute("href")).toBe("/app/admin/?page=5");
    expect(await firstColumn()).toEqual([]);
  });

  test("a page past the end of a non-empty list says so, not that the list is empty", async () => {
    // Each once said "No workflows yet. Create the first one.", "You have no API tokens yet.",
    // "No runs match these filters." … on ?page=99 of a list with rows.
    const cases: [string, string][] = [
      ["/app/orgs/acme/workflows/?page=99", "201 items in all"],
      ["/app/settings/tokens/?page=99", "51 items in all"],
      ["/app/orgs/acme/workflows/wf-001/versions/?page=99", "(1 item in all)"],
      ["/app/orgs/acme/audit/?page=999", "items in all"],
    ];
    for (const [path, count] of cases) {
      await page.goto(path);
      const note = page.locator("p.empty");
      await note.waitFor();
      const text = await note.textContent();
      expect(text).toStartWith("This page is past the end of the list (");
      expect(text).toContain(count);
      expect(await page.getByRole("link", { name: "← Previous" }).count()).toBe(1);
    }
    // An empty list still says it is empty.
    await page.goto("/app/orgs/acme/runs/");
    expect(await page.locator("p.empty").textContent()).toBe("No runs match these filters.");
  });

  test("organizations, members and tokens page too", async () => {
    expect((await open("/app/admin/orgs/", 2))[0]).toBe("acme");
    expect(await next(2, 2)).toEqual(["org-050"]);

    expect((await open("/app/orgs/acme/members/", 2))[0]).toBe("root");
    expect(await next(2, 2)).toEqual(["u050"]);

    // Newest first: the harness's token, the oldest, is alone on page 2.
    expect((await open("/app/settings/tokens/", 2))[0]).toBe("t050");
    expect(await next(2, 2)).toEqual(["root-token"]);
  });

  test("the runs page's workflow filter offers all 201 workflows", async () => {
    await page.goto("/app/orgs/acme/runs/");
    const options = page.locator('select[name="workflow"] option');
    await options.first().waitFor({ state: "attached" });
    const values = await options.evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(values).toEqual(["", ...Array.from({ length: 201 }, (_, i) => `wf-${pad(i + 1)}`)]);
  });
});
