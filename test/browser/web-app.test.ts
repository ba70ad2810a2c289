// The web app in real Chromium against a real server: sign in, API tokens, a workflow with a
// JSON Schema step, a failing run with its finding on its line, deactivate/reactivate, and what
// a viewer is not offered. Saves screenshots of the main pages into docs/screenshots/.
import { SYSTEM } from "../../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, newPage, screenshot, signIn } from "./browser.ts";

const PASSWORD = "root password 1";
const SCHEMA = JSON.stringify(
  {
    type: "object",
    required: ["id", "customer"],
    properties: {
      id: { type: "integer" },
      total: { type: "number", minimum: 0 },
      customer: { type: "string" },
    },
  },
  null,
  2,
);
// Line 3 breaks the schema (total is a string); "customer" is missing.
const BAD_ORDER = '{\n  "id": 42,\n  "total": "a lot"\n}\n';

describe.skipIf(!hasChromium)("web app in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let apiToken: string;

  beforeAll(async () => {
    s = await startTestServer();
    const root = await s.deps.users.getByUsername("root");
    await s.deps.users.setPassword(root!.id, await Bun.password.hash(PASSWORD), SYSTEM);
    const vera = await s.user("vera", "acme", "viewer");
    await s.deps.users.setPassword(vera.id, await Bun.password.hash("vera password"), SYSTEM);
    await s.user("ed", "acme", "executor");
    apiToken = s.rootToken;
    browser = await launch();
    page = await newPage(browser, s.url);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  const apiFetch = (path: string, init: { method?: string; token: string; body?: string; type?: string }) =>
    page.evaluate(
      async ({ path, init }) => {
        const headers: Record<string, string> = { authorization: `Bearer ${init.token}` };
        if (init.type) headers["content-type"] = init.type;
        const r = await fetch(path, {
          method: init.method ?? "GET",
          headers,
          body: init.body,
          credentials: "omit",
        });
        return { status: r.status, json: await r.json() };
      },
      { path, init },
    );

  test("signs in with username and password", async () => {
    await page.goto("/");
    // Awaited, not sampled: the page renders the form from its script after the load, and on a
    // busy machine the heading was not there yet when isVisible() looked (CI, 2026-11-25).
    await page.getByRole("heading", { name: "Sign in to Assay" }).waitFor();
    await screenshot(page, "login", false);
    await page.getByLabel("Username").fill("root");
    await page.getByLabel("Password").fill("wrong password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "Invalid username or password." }).waitFor();
    await signIn(page, "root", PASSWORD);
    expect(new URL(page.url()).pathname).toBe("/app/orgs/acme/workflows/");
    await page.getByRole("heading", { name: "Workflows", level: 1 }).waitFor();
  });

  test("creates an API token that works with fetch, then revokes it and the API refuses it", async () => {
    await page.getByRole("link", { name: "API tokens" }).click();
    await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Create token" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Name").fill("CI pipeline");
    await dialog.getByLabel("Expiry").selectOption("90");
    await dialog.getByRole("button", { name: "Create token" }).click();
    await page.getByText("You will not see it again.").waitFor();
    const token = await page.getByLabel("Value of the new token CI pipeline").inputValue();
    expect(token).toMatch(/^assay_[A-Za-z0-9_-]{51}$/);
    await screenshot(page, "tokens");

    const ok = await apiFetch("/api/v1/users/me/", { token });
    expect(ok.status).toBe(200);
    expect(ok.json.token.name).toBe("CI pipeline");

    await page.getByRole("button", { name: "Revoke token CI pipeline" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke token" }).click();
    await page.locator("main").getByText("Token “CI pipeline” revoked.").waitFor();
    const refused = await apiFetch("/api/v1/users/me/", { token });
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual({
      detail: "The token has been revoked.",
      code: "authentication_required",
      status: 401,
      errors: [],
    });
  });

  test("creates a workflow with a JSON Schema step; a bad schema is shown next to its field", async () => {
    await page.goto("/app/orgs/acme/workflows/");
    await page.getByRole("link", { name: "New workflow" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Orders");
    expect(await page.getByLabel("Slug").inputValue()).toBe("orders");
    await page.getByRole("button", { name: "Add step" }).click();
    await page.getByLabel("Step name").fill("Order schema");
    expect(await page.getByLabel("Validator").inputValue()).toBe("json_schema");
    const schema = page.getByLabel("JSON Schema");
    await schema.fill('{"type": "objekt"}');
    await page.getByRole("button", { name: "Create workflow" }).click();
    const error = page.locator(".field:has(textarea) .field-error").first();
    await error.waitFor();
    expect(await error.textContent()).toContain("/type");
    expect(await schema.getAttribute("aria-invalid")).toBe("true");
    await screenshot(page, "workflow-editor");

    await schema.fill(SCHEMA);
    await page.getByRole("button", { name: "Create workflow" }).click();
    await page.waitForURL(/\/app\/orgs\/acme\/workflows\/orders\/$/);
    await page.getByRole("heading", { name: "Orders", level: 1 }).waitFor();
    await page.locator("main").getByText("Workflow “Orders” created.").waitFor();
    expect(await page.locator("ol.steps li").count()).toBe(1);
    await screenshot(page, "workflow");
  });

  test("submits a file that fails and shows the finding with its line", async () => {
    await page.getByRole("link", { name: "Run", exact: true }).click();
    await page.getByLabel("File", { exact: true }).setInputFiles({
      name: "order-42.json",
      mimeType: "application/json",
      buffer: Buffer.from(BAD_ORDER),
    });
    await page.getByRole("button", { name: "Start run" }).click();
    await page.waitForURL(/\/app\/orgs\/acme\/runs\/[0-9a-f-]{36}\/$/);
    await page.getByRole("status").filter({ hasText: "Finished: failed." }).waitFor();
    const findings = page.locator(".run-step table");
    expect(await findings.textContent()).toContain("json_schema.type");
    const where = page.getByRole("link", { name: /^line 3/ });
    await where.waitFor();
    const line3 = page.locator("#L3");
    expect(await line3.getAttribute("class")).toContain("sev-error");
    expect(await line3.textContent()).toContain('"total": "a lot"');
    await where.click();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("L3");
    await screenshot(page, "run-detail");

    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "run-detail-phone");
    await page.setViewportSize({ width: 1280, height: 800 });

    const more = [
      {
        content: '{"id": 7, "customer": "Initech", "total": 12.5}',
        content_type: "application/json",
        filename: "order-7.json",
      },
      { content: '{"id": 8,', content_type: "application/json", filename: "broken.json" },
    ];
    for (const body of more)
      await apiFetch("/api/v1/orgs/acme/workflows/orders/runs/", {
        method: "POST",
        token: apiToken,
        type: "application/json",
        body: JSON.stringify(body),
      });
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Runs" }).click();
    await page.getByRole("heading", { name: "Runs", level: 1 }).waitFor();
    expect(await page.locator("tbody tr").count()).toBe(3);
    await page.getByLabel("Status").selectOption("succeeded");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/status=succeeded/);
    await page.locator("tbody tr").nth(1).waitFor({ state: "detached" });
    expect(await page.locator("tbody").textContent()).toContain("order-7.json");
    await page.getByRole("link", { name: "Clear" }).click();
    await page.waitForURL(/\/runs\/$/);
    await page.locator("tbody tr:nth-child(3)").waitFor();
    await screenshot(page, "runs");
  });

  test("deactivates the workflow (runs refused) and reactivates it", async () => {
    await page.goto("/app/orgs/acme/workflows/orders/");
    await page.getByRole("button", { name: "Deactivate" }).click();
    await page.locator("main").getByText("Workflow deactivated: new runs are refused.").waitFor();
    expect(await page.getByRole("link", { name: "Run", exact: true }).count()).toBe(0);
    const refused = await apiFetch("/api/v1/orgs/acme/workflows/orders/runs/", {
      method: "POST",
      token: apiToken,
      type: "application/json",
      body: "{}",
    });
    expect(refused.status).toBe(409);
    expect(refused.json.code).toBe("workflow_inactive");

    await page.getByRole("button", { name: "Activate" }).click();
    await page.locator("main").getByText("Workflow activated: it accepts runs again.").waitFor();
    await page.getByRole("link", { name: "Run", exact: true }).waitFor();
    const accepted = await apiFetch("/api/v1/orgs/acme/workflows/orders/runs/", {
      method: "POST",
      token: apiToken,
      type: "application/json",
      body: '{"id": 1, "customer": "ACME"}',
    });
    expect([accepted.status, accepted.json.status]).toEqual([201, "succeeded"]);
  });

  test("deletes a workflow after a confirmation that Escape cancels", async () => {
    const created = await apiFetch("/api/v1/orgs/acme/workflows/", {
      method: "POST",
      token: apiToken,
      type: "application/json",
      body: JSON.stringify({ slug: "scratch", name: "Scratch", allowed_file_types: ["TEXT"] }),
    });
    expect(created.status).toBe(201);
    await page.goto("/app/orgs/acme/workflows/scratch/");
    const del = page.getByRole("button", { name: "Delete", exact: true });
    await del.click();
    await page.getByRole("dialog").waitFor();
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Delete");
    await del.click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete workflow" }).click();
    await page.locator("main").getByText("Workflow “Scratch” deleted.").waitFor();
    expect(new URL(page.url()).pathname).toBe("/app/orgs/acme/workflows/");
    expect(await page.getByRole("link", { name: "Scratch" }).count()).toBe(0);
  });

  test("the keyboard alone signs in and creates a token", async () => {
    const kb = await newPage(browser, s.url);
    await kb.goto("/");
    await kb.getByLabel("Username").waitFor();
    await kb.keyboard.type("vera"); // the username field has focus on arrival
    await kb.keyboard.press("Tab");
    await kb.keyboard.type("vera password");
    await kb.keyboard.press("Enter");
    await kb.locator("header.top").waitFor();
    await kb.goto("/app/settings/tokens/");
    const create = kb.getByRole("button", { name: "Create token" });
    await create.focus();
    await kb.keyboard.press("Enter");
    await kb.getByRole("dialog").getByLabel("Name").waitFor();
    expect(await kb.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("name");
    await kb.keyboard.type("laptop");
    await kb.keyboard.press("Enter");
    await kb.getByText("You will not see it again.").waitFor();
    // The value gets the focus once the token list has been read again (a request later).
    await kb.waitForFunction(() =>
      (document.activeElement as HTMLInputElement | null)?.value?.startsWith("assay_"),
    );
    expect(await kb.evaluate(() => (document.activeElement as HTMLInputElement).value)).toMatch(/^assay_/);
    await kb.context().close();
  });

  test("a password change renews the session; the next write carries the new CSRF token", async () => {
    const ed = await s.deps.users.getByUsername("ed");
    await s.deps.users.setPassword(ed!.id, await Bun.password.hash("ed password 1"), SYSTEM);
    const p = await newPage(browser, s.url);
    await signIn(p, "ed", "ed password 1");
    const before = (await p.context().cookies()).find((c) => c.name === "assay_session")?.value;
    await p.goto("/app/settings/account/");
    await p.getByLabel("Current password").fill("ed password 1");
    await p.getByLabel("New password", { exact: true }).fill("ed password 2");
    await p.getByLabel("New password again").fill("ed password 2");
    await p.getByRole("button", { name: "Change password" }).click();
    await p.locator("main").getByText("Password changed.").waitFor();
    const after = (await p.context().cookies()).find((c) => c.name === "assay_session")?.value;
    expect(after).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(after).not.toBe(before);
    // A write (a token) from the same page, without a reload: it needs the new CSRF token.
    await p.getByRole("link", { name: "API tokens" }).click();
    await p.getByRole("button", { name: "Create token" }).click();
    await p.getByRole("dialog").getByLabel("Name").fill("after the change");
    await p.keyboard.press("Enter");
    await p.getByText("You will not see it again.").waitFor();
    await p.context().close();
  });

  test("an admin changes a member's role", async () => {
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByRole("heading", { name: "Members", level: 1 }).waitFor();
    expect(await page.getByRole("button", { name: /^Save the role of/ }).count()).toBe(0);
    await page.getByLabel("Role of ed", { exact: true }).selectOption("author");
    await page.getByRole("button", { name: "Save the role of ed" }).click();
    await page.locator("main").getByText("ed is now author.").waitFor();
    expect(await page.getByLabel("Role of ed", { exact: true }).inputValue()).toBe("author");
    await screenshot(page, "members");
  });

  test("every page renders without a script error, and pasted content starts a run", async () => {
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    const pages: [string, string][] = [
      ["/app/orgs/acme/workflows/", "Workflows"],
      ["/app/orgs/acme/workflows/orders/edit", "Edit “Orders”"],
      ["/app/orgs/acme/webhooks/", "Webhooks"],
      ["/app/settings/account/", "Account: root"],
      ["/app/admin/", "Administration"],
      ["/app/admin/orgs/", "Administration"],
      ["/app/admin/settings/", "Administration"],
      ["/app/orgs/acme/nothing-here", "Not found"],
      // A malformed escape used to throw in the router and leave "Loading…" for ever.
      ["/app/orgs/%E0%A4%A/workflows/", "Not found"],
    ];
    for (const [path, title] of pages) {
      await page.goto(path);
      await page.getByRole("heading", { name: title, level: 1 }).waitFor();
    }
    await page.goto("/app/orgs/acme/workflows/orders/run");
    await page.getByLabel("Paste content").check();
    await page.getByLabel("Content", { exact: true }).fill('{"id": "x", "customer": "ACME"}');
    // Prefer: respond-async: the run page opens before the run is final and follows it.
    await page.getByLabel(/^Open the result page at once/).check();
    await page.getByRole("button", { name: "Start run" }).click();
    await page.getByRole("status").filter({ hasText: "Finished: failed." }).waitFor();
    expect(await page.locator("#L1").getAttribute("class")).toContain("sev-error");
    expect(problems).toEqual([]);
  });

  test("a viewer is not offered what a viewer may not do", async () => {
    const viewer = await newPage(browser, s.url);
    await signIn(viewer, "vera", "vera password");
    await viewer.getByRole("heading", { name: "Workflows", level: 1 }).waitFor();
    await viewer.getByRole("link", { name: "Orders" }).waitFor();
    expect(await viewer.getByRole("link", { name: "New workflow" }).count()).toBe(0);
    expect(await viewer.getByRole("link", { name: "Webhooks" }).count()).toBe(0);
    expect(await viewer.getByRole("link", { name: "Administration" }).count()).toBe(0);

    await viewer.getByRole("link", { name: "Orders" }).click();
    await viewer.getByRole("heading", { name: "Orders", level: 1 }).waitFor();
    for (const name of ["Run", "Edit"])
      expect(await viewer.getByRole("link", { name, exact: true }).count()).toBe(0);
    for (const name of ["Deactivate", "Delete"])
      expect(await viewer.getByRole("button", { name }).count()).toBe(0);

    await viewer.getByRole("link", { name: "Members" }).click();
    await viewer.getByRole("heading", { name: "Members", level: 1 }).waitFor();
    expect(await viewer.getByRole("button", { name: /^Remove/ }).count()).toBe(0);
    expect(await viewer.getByRole("heading", { name: "Add a member" }).count()).toBe(0);
    expect(await viewer.getByRole("combobox", { name: /^Role of/ }).count()).toBe(0);

    await viewer.goto("/app/orgs/acme/new-workflow");
    await viewer.getByRole("heading", { name: "Not allowed" }).waitFor();
    // The run form, opened by its address, is refused too (it was shown; its POST answered 403).
    await viewer.goto("/app/orgs/acme/workflows/orders/run");
    await viewer.getByRole("heading", { name: "Not allowed" }).waitFor();
    expect(await viewer.getByRole("button", { name: "Start run" }).count()).toBe(0);
    // The audit log too, with the same heading (it had none: focus stayed put after navigation).
    await viewer.goto("/app/orgs/acme/audit/");
    await viewer.getByRole("heading", { name: "Not allowed", level: 1 }).waitFor();
    expect(await viewer.getByText("The audit log is for the org's Admins.").count()).toBe(1);

    await viewer.getByRole("button", { name: "Sign out" }).click();
    await viewer.getByRole("heading", { name: "Sign in to Assay" }).waitFor();
    await viewer.goto("/app/orgs/acme/workflows/");
    await viewer.getByRole("heading", { name: "Sign in to Assay" }).waitFor();
    await viewer.context().close();
  });
});
