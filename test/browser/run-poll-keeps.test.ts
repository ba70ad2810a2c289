// The run page of a run still going, after the user has loaded more findings, and after they
// leave it. Each poll that saw a change rebuilt the whole page from the run answer: the step went
// back to its first 1000 findings and the control the user was on was rebuilt (until 2026-11-30).
// And the wait before the next poll outlived the page by up to 30 s. The run is held by a gate the
// test opens (helpers/gates.ts); the page's clock is Playwright's, moved by the test.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import type { Gate } from "../helpers/gates.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, rootSignedIn } from "./browser.ts";

// One finding a line past the first (max_line_length 1), then a step held until the gate opens.
const LINES = 1300;
const WORKFLOW = {
  slug: "lines-then-hold",
  allowed_file_types: ["JSON"],
  fail_fast: false,
  steps: [
    { name: "short lines", validator: "text_rules", config: { max_line_length: 1, max_findings: 2000 } },
    { name: "hold", validator: "test_hold", config: {} },
  ],
};
const doc = (gate: Gate) =>
  `{"gate": ${JSON.stringify(gate.name)}, "n": [\n${Array.from({ length: LINES - 2 }, () => "11").join(",\n")}\n]}\n`;

describe.skipIf(!hasChromium)("the run page across polls (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  const heldRun = async (gate: Gate) => {
    const r = await call(s, "POST", `/api/v1/orgs/acme/workflows/${WORKFLOW.slug}/runs/`, {
      token: s.rootToken,
      raw: doc(gate),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(r.status).toBe(202);
    await gate.held();
    return r.json.id as string;
  };

  beforeAll(async () => {
    s = await startTestServer();
    await createWorkflow(s, s.rootToken, WORKFLOW);
    ({ browser, page } = await rootSignedIn(s, "root password 1"));
  });
  afterAll(async () => {
    s?.gates.openAll();
    await browser?.close();
    await s?.close();
  });

  test("a poll that sees the run change keeps the findings loaded and the focused control", async () => {
    const gate = s.gates.gate();
    const id = await heldRun(gate);
    await page.goto(`/app/orgs/acme/runs/${id}/`);
    await page
      .getByRole("status")
      .filter({ hasText: /^Running: 1 of 2 steps done/ })
      .waitFor();
    const rows = page.getByRole("table", { name: "Findings of step 1" }).locator("tbody tr");
    expect(await rows.count()).toBe(1000);
    await page.getByRole("button", { name: "Show 200 more" }).click();
    await page.getByText("Showing 1,200 of 1,300 findings.").waitFor();
    const button = page.getByRole("button", { name: "Show 100 more" });
    await button.focus();
    // The step section the user is working in, to tell whether a poll replaced it.
    await page.evaluate(() => {
      (window as unknown as Record<string, unknown>).section = document.querySelector("section.run-step");
    });

    // The run changes (its held step passes, the run ends): the next poll sees it and redraws.
    gate.open();
    await page.getByRole("status").filter({ hasText: "Finished: failed." }).waitFor({ timeout: 30_000 });
    await page
      .getByRole("heading", { name: /^2\. hold/ })
      .getByText("passed")
      .waitFor();

    expect(await rows.count()).toBe(1200);
    expect(await page.getByText("Showing 1,200 of 1,300 findings.").count()).toBe(1);
    expect(await page.locator("#L1001").getAttribute("class")).toContain("sev-error");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Show 100 more");
    expect(
      await page.evaluate(
        () =>
          (window as unknown as Record<string, unknown>).section ===
          document.querySelector("section.run-step"),
      ),
    ).toBe(true);
    // And the next page still follows on from the 1200 kept.
    await button.click();
    await rows.nth(1299).waitFor();
    expect(await rows.count()).toBe(1300);
  });

  test("leaving the page clears the wait before its next poll: no poll of the run after", async () => {
    const gate = s.gates.gate();
    const id = await heldRun(gate);
    const context = await browser.newContext({ baseURL: s.url });
    await context.addCookies(await page.context().cookies());
    const p = await context.newPage();
    await p.clock.install();
    // Timers the page has set and neither cleared nor run yet, by id (over the clock's own).
    await p.addInitScript(() => {
      const w = window as unknown as { pending: Map<number, number> };
      w.pending = new Map();
      const set = window.setTimeout;
      const clear = window.clearTimeout;
      window.setTimeout = ((fn: () => void, ms?: number, ...args: unknown[]) => {
        const t = set(() => {
          w.pending.delete(t);
          fn(...(args as []));
        }, ms) as unknown as number;
        w.pending.set(t, ms ?? 0);
        return t;
      }) as typeof window.setTimeout;
      window.clearTimeout = ((t?: number) => {
        if (t !== undefined) w.pending.delete(t);
        clear(t);
      }) as typeof window.clearTimeout;
    });
    const runUrl = `${s.url}/api/v1/orgs/acme/runs/${id}/`;
    let polls = 0;
    p.on("request", (r) => {
      if (r.url() === runUrl) polls++;
    });
    await p.goto(`/app/orgs/acme/runs/${id}/`);
    await p
      .getByRole("status")
      .filter({ hasText: /^Running/ })
      .waitFor();
    // In one task of the page (no timer can run in between): the waits pending on the run page,
    // a click on "Runs" (the router leaves the page at once), and which of those waits are left.
    const { waits, left } = await p.evaluate(() => {
      const pending = (window as unknown as { pending: Map<number, number> }).pending;
      const waits = [...pending].filter(([, ms]) => ms >= 1000).map(([t]) => t);
      document.querySelector<HTMLAnchorElement>('p.crumbs a[href$="/runs/"]')!.click();
      return { waits, left: waits.filter((t) => pending.has(t)) };
    });
    expect(waits.length).toBe(1);
    expect(left).toEqual([]);
    await p.getByRole("heading", { name: "Runs", level: 1 }).waitFor();
    const after = polls;
    // Past the longest wait (30 s), the run still held (the server would answer): no poll of it.
    await p.clock.runFor(31_000);
    // Requests are reported in order: once this one is seen, any poll made before it has been too.
    const sentinel = `${s.url}/api/v1/orgs/acme/runs/${id}/content/`;
    await Promise.all([
      p.waitForRequest(sentinel),
      p.evaluate((u) => fetch(u).then((r) => r.status), sentinel),
    ]);
    expect(polls).toBe(after);
    await context.close();
    gate.open();
  });
});
