// The web app's run page over a run with more findings than a run answer carries (issue #19): it
// shows the first 1000, says how many there are, and loads the rest a page at a time from
// …/findings/, each new finding also marked on its line of the content.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, memberSignedIn } from "./browser.ts";

const PASSWORD = "viewer password 1";
const LINES = 1300;

describe.skipIf(!hasChromium)("run page with many findings (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let runId = "";

  beforeAll(async () => {
    s = await startTestServer();
    await createWorkflow(s, s.rootToken, {
      slug: "lines",
      allowed_file_types: ["TEXT"],
      steps: [
        { name: "short lines", validator: "text_rules", config: { max_line_length: 1, max_findings: 2000 } },
      ],
    });
    const text = `${Array.from({ length: LINES }, (_, i) => `line ${i + 1}`).join("\n")}\n`;
    const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/lines/runs/", {
      token: s.rootToken,
      raw: text,
      headers: { "content-type": "text/plain" },
    });
    expect(r.status).toBe(201);
    runId = r.json.id;
    ({ browser, page } = await memberSignedIn(s, "vera", "acme", "viewer", PASSWORD));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("shows 1000 of 1300 findings, then 200 more, then the last 100", async () => {
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    await page.goto(`/app/orgs/acme/runs/${runId}/`);
    await page.getByRole("status").filter({ hasText: "Finished: failed." }).waitFor();
    const rows = page.getByRole("table", { name: "Findings of step 1" }).locator("tbody tr");
    expect(await rows.count()).toBe(1000);
    await page.getByText("Showing 1,000 of 1,300 findings.").waitFor();
    // Line 1001 is not marked yet: its finding has not been loaded.
    expect(await page.locator("#L1001").getAttribute("class")).not.toContain("sev-error");

    await page.getByRole("button", { name: "Show 200 more" }).click();
    await page.getByText("Showing 1,200 of 1,300 findings.").waitFor();
    expect(await rows.count()).toBe(1200);
    expect(await page.locator("#L1001").getAttribute("class")).toContain("sev-error");

    await page.getByRole("button", { name: "Show 100 more" }).click();
    await page.getByRole("table", { name: "Findings of step 1" }).locator("tbody tr").nth(1299).waitFor();
    expect(await rows.count()).toBe(1300);
    expect(await page.getByText(/^Showing .* findings\.$/).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  test("Show 200 more appends 200 rows: the rows shown and the content view stay, only the new lines change", async () => {
    await page.goto(`/app/orgs/acme/runs/${runId}/`);
    await page.getByText("Showing 1,000 of 1,300 findings.").waitFor();
    // Remember the elements shown, and record every change made inside the page's main.
    await page.evaluate(() => {
      const w = window as unknown as Record<string, unknown>;
      w.firstRow = document.querySelector("table tbody tr");
      w.tbody = document.querySelector("table tbody");
      w.viewer = document.querySelector(".viewer");
      w.line1 = document.getElementById("L1");
      w.button = document.querySelector("p.more button");
      const changes = { removed: [] as string[], added: 0, rowsChanged: new Set<string>() };
      w.changes = changes;
      new MutationObserver((records) => {
        for (const r of records) {
          const target = r.target as Element;
          for (const n of r.removedNodes)
            if (n instanceof Element && n.matches("tr, .ln-row, .viewer, table"))
              changes.removed.push(n.tagName);
          if (target.matches("tbody")) changes.added += r.addedNodes.length;
          const row = target.closest?.(".ln-row");
          if (row) changes.rowsChanged.add(row.id);
        }
      }).observe(document.querySelector("main")!, { childList: true, subtree: true });
    });
    await page.getByRole("button", { name: "Show 200 more" }).click();
    await page.getByText("Showing 1,200 of 1,300 findings.").waitFor();
    const seen = await page.evaluate(() => {
      const w = window as unknown as Record<string, unknown> & {
        changes: { removed: string[]; added: number; rowsChanged: Set<string> };
      };
      const changed = [...w.changes.rowsChanged].map((id) => Number(id.slice(1)));
      return {
        sameFirstRow: document.querySelector("table tbody tr") === w.firstRow,
        sameTbody: document.querySelector("table tbody") === w.tbody,
        sameViewer: document.querySelector(".viewer") === w.viewer,
        sameLine1: document.getElementById("L1") === w.line1,
        sameButton: document.querySelector("p.more button") === w.button,
        removed: w.changes.removed,
        added: w.changes.added,
        linesChanged: [changed.length, Math.min(...changed), Math.max(...changed)],
      };
    });
    expect(seen).toEqual({
      sameFirstRow: true,
      sameTbody: true,
      sameViewer: true,
      sameLine1: true,
      sameButton: true,
      removed: [],
      added: 200,
      // Only the lines of the 200 findings loaded got their marks; the other 1,100 were not redrawn.
      linesChanged: [200, 1001, 1200],
    });
    expect(await page.locator("#L1200").getAttribute("class")).toContain("sev-error");
    expect(await page.locator("#L1201").getAttribute("class")).not.toContain("sev-error");
    // Focus stays on the button, which now offers the last 100.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Show 100 more");
  });
});
