// The webhooks page in Chromium: a webhook added there shows its secret once and appears in the
// list at once (the list was left as it was until the page was reloaded). What the receiver
// answered is shown as text, its bidirectional controls as \uNNNN (they were obeyed).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { until } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { type Receiver, startReceiver } from "../helpers/webhook-receiver.ts";
import { hasChromium, rootSignedIn } from "./browser.ts";

const PASSWORD = "root password 1";

describe.skipIf(!hasChromium)("the webhooks page", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer({ webhook_allow_private: true, webhook_retry_delays_ms: "100" });
    ({ browser, page } = await rootSignedIn(s, PASSWORD));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("a new webhook is listed at once, and its secret stays shown", async () => {
    await page.goto("/app/orgs/acme/webhooks/");
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    expect(await page.getByText("No webhooks yet.").count()).toBe(1);
    await page.getByLabel("Payload URL").fill("http://127.0.0.1:9/hook-new");
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByText("Webhook created").waitFor();
    const row = page.locator("table").getByRole("link", { name: "http://127.0.0.1:9/hook-new" });
    await row.waitFor();
    expect(await page.getByText("No webhooks yet.").count()).toBe(0);
    expect(await page.getByLabel("Signing secret").inputValue()).toMatch(/^whsec_/);
  });

  test("a refused add, then a good one: the refusal's messages go, not left by the emptied form", async () => {
    await page.goto("/app/orgs/acme/webhooks/");
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    await page.getByLabel("Payload URL").fill("http://127.0.0.1:9/hook-refused-first");
    await page.getByLabel("Only these workflows (slugs, comma-separated)").fill("no-such-workflow");
    await page.getByRole("button", { name: "Add webhook" }).click();
    const form = page.locator("form", { has: page.getByRole("button", { name: "Add webhook" }) });
    await form.locator(".field-error").waitFor();
    expect(await form.locator(".field-error").allInnerTexts()).toEqual([
      '✖ No workflow with the slug "no-such-workflow" in this organization.',
    ]);
    await page.getByLabel("Only these workflows (slugs, comma-separated)").fill("");
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByText("Webhook created: http://127.0.0.1:9/hook-refused-first").waitFor();
    expect(await form.locator(".field-error, .form-errors").count()).toBe(0);
    expect(await form.locator("[aria-invalid]").count()).toBe(0);
  });

  test("the delivery log pages: the 51st delivery is reached with Next", async () => {
    const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: s.rootToken,
      body: { url: "http://127.0.0.1:9/hook-many", events: ["run.completed"] },
    });
    expect(hook.status).toBe(201);
    const base = `/api/v1/orgs/acme/webhooks/${hook.json.id}/`;
    for (let i = 0; i < 51; i++)
      expect((await call(s, "POST", `${base}ping/`, { token: s.rootToken })).status).toBeLessThan(300);
    const all = (await call(s, "GET", `${base}deliveries/?page_size=200`, { token: s.rootToken })).json;
    expect(all.count).toBe(51);
    await page.goto(`/app/orgs/acme/webhooks/${hook.json.id}/`);
    await page.getByText("Page 1 of 2 (51 items)").waitFor();
    expect(await page.locator("table tbody tr").count()).toBe(50);
    await page.getByRole("link", { name: "Next →" }).click();
    await page.getByText("Page 2 of 2 (51 items)").waitFor();
    expect(page.url()).toEndWith(`/app/orgs/acme/webhooks/${hook.json.id}/?page=2`);
    expect(await page.locator("table tbody tr").count()).toBe(1);
    // The last one listed by the API is the one on page 2 (its time in the row).
    const oldest = all.results[50];
    expect(await page.locator("table tbody tr td").nth(4).locator("time").getAttribute("datetime")).toBe(
      oldest.created_at,
    );
  });

  test("a delivery retried to success shows its last attempt's status, not its first", async () => {
    const receiver: Receiver = startReceiver();
    try {
      receiver.respond((_req, n) => new Response(n === 1 ? "down" : "ok", { status: n === 1 ? 500 : 200 }));
      const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
        token: s.rootToken,
        body: { url: receiver.url, events: ["run.completed"] },
      });
      expect(hook.status).toBe(201);
      const base = `/api/v1/orgs/acme/webhooks/${hook.json.id}/`;
      expect((await call(s, "POST", `${base}ping/`, { token: s.rootToken })).status).toBeLessThan(300);
      // Awaited through the API: the delivery has succeeded on its second attempt.
      const delivery = async () =>
        (await call(s, "GET", `${base}deliveries/`, { token: s.rootToken })).json.results[0];
      await until(async () => (await delivery())?.status === "succeeded", "the delivery to succeed");
      expect((await delivery()).attempts.map((a: { http_status: number }) => a.http_status)).toEqual([
        500, 200,
      ]);
      await page.goto(`/app/orgs/acme/webhooks/${hook.json.id}/`);
      const row = page.locator("tr", { hasText: "2 attempts" });
      await row.waitFor();
      const cells = await row.locator("td").allInnerTexts();
      expect(cells).toContain("200");
      expect(cells).not.toContain("500");
    } finally {
      await receiver.stop();
    }
  });

  test("a receiver's answer is text, a bidirectional control in it shown as \\uNNNN", async () => {
    const receiver: Receiver = startReceiver();
    try {
      receiver.respond(
        () =>
          new Response("<b>down</b> until \u202etomorrow", {
            status: 503,
            headers: { "content-type": "text/html" },
          }),
      );
      const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
        token: s.rootToken,
        body: { url: receiver.url, events: ["run.completed"] },
      });
      expect(hook.status).toBe(201);
      const base = `/api/v1/orgs/acme/webhooks/${hook.json.id}/`;
      expect((await call(s, "POST", `${base}ping/`, { token: s.rootToken })).status).toBeLessThan(300);
      await until(
        async () =>
          (await call(s, "GET", `${base}deliveries/`, { token: s.rootToken })).json.results[0]?.attempts
            .length > 0,
        "an attempt",
      );
      await page.goto(`/app/orgs/acme/webhooks/${hook.json.id}/`);
      await page.locator("details summary").first().click();
      const excerpt = page.locator("details pre").first();
      expect(await excerpt.textContent()).toBe("<b>down</b> until \\u202etomorrow");
    } finally {
      await receiver.stop();
    }
  });
});
