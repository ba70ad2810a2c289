// Accessibility of every page of the web app in Chromium. An automated pass with axe-core (its
// WCAG 2.x A/AA and best-practice rules, light and dark themes) and what axe does not judge: one
// <h1> and a title per page, nothing scrolling sideways at 320 px (a 1280 px screen at 400%),
// every control reached by Tab with a focus ring of 3:1, menus and dialogs closed with Escape,
// and a list refreshed in place that keeps keyboard focus and says what changed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { HOLD_WORKFLOW } from "../helpers/gates.ts";
import { type TestServer, call, startEmptyServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, setPassword, signIn } from "./browser.ts";

const PASSWORD = "root password 1";
// axe-core's own bundle, injected into the page: it runs offline, inside Chromium.
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * A page in a context that lets axe's script in: the app's Content-Security-Policy allows no
 * inline script, and axe is injected as one (the app itself needs no exception to it).
 */
async function axePage(browser: Browser, baseURL: string): Promise<Page> {
  const ctx = await browser.newContext({
    baseURL,
    viewport: { width: 1280, height: 800 },
    colorScheme: "light",
    bypassCSP: true,
  });
  const page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe's violations on the page as it is now, one line each ("serious color-contrast: … — #x"). */
async function axe(page: Page, only?: string[]): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: AXE });
  const violations: Violation[] = await page.evaluate(async (rules) => {
    // biome-ignore lint/suspicious/noExplicitAny: axe's global, injected above
    const axe = (window as any).axe;
    const r = await axe.run(document, {
      runOnly: rules
        ? { type: "rule", values: rules }
        : { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
      resultTypes: ["violations"],
    });
    return r.violations;
  }, only ?? null);
  return violations.map(
    (v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
  );
}

/** What axe leaves to people: the title, a single h1, one main, and no sideways scrolling. */
const structure = (page: Page) =>
  page.evaluate(() => ({
    title: document.title,
    h1: document.querySelectorAll("h1").length,
    main: document.querySelectorAll("main").length,
    lang: document.documentElement.lang,
    overflow: document.documentElement.scrollWidth > document.documentElement.clientWidth,
  }));

/** The page's problems, light and dark, and at 320 px wide. */
async function audit(page: Page, name: string): Promise<string[]> {
  const out: string[] = [];
  const st = await structure(page);
  if (!/ · Assay$/.test(st.title) || st.title.startsWith("Assay")) out.push(`title "${st.title}"`);
  if (st.h1 !== 1) out.push(`${st.h1} h1`);
  if (st.main !== 1) out.push(`${st.main} main`);
  if (st.lang !== "en") out.push(`lang "${st.lang}"`);
  out.push(...(await axe(page)));
  await page.emulateMedia({ colorScheme: "dark" });
  out.push(...(await axe(page, ["color-contrast"])).map((x) => `dark: ${x}`));
  await page.emulateMedia({ colorScheme: "light" });
  const size = page.viewportSize()!;
  await page.setViewportSize({ width: 320, height: 640 });
  if ((await structure(page)).overflow) out.push("scrolls sideways at 320 px");
  out.push(...(await axe(page)).map((x) => `320 px: ${x}`));
  await page.setViewportSize(size);
  return out.map((x) => `${name}: ${x}`);
}

/**
 * Tabs through the whole page from the top: the visible controls Tab never reaches, and those
 * that show no focus ring when it does. A radio group is one stop (arrows move in it), and what
 * is in a closed <details> is not shown.
 */
async function tabWalk(page: Page, name: string): Promise<string[]> {
  const controls: string[] = await page.evaluate(() => {
    const sel =
      "a[href], button:not(:disabled), input:not([type=hidden]):not([type=radio]):not(:disabled), select, textarea, summary, [tabindex='0']";
    const els = [...document.querySelectorAll<HTMLElement>(sel)].filter(
      (e) =>
        e.getClientRects().length > 0 &&
        getComputedStyle(e).visibility !== "hidden" &&
        !(e.tagName !== "SUMMARY" && e.closest("details:not([open])")),
    );
    els.forEach((e, i) => {
      e.dataset.tab = String(i);
    });
    return els.map(
      (e) =>
        `${e.tagName.toLowerCase()} "${(e.getAttribute("aria-label") ?? e.textContent ?? "").trim().slice(0, 40)}"`,
    );
  });
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
  });
  const reached = new Set<string>();
  // Shown on at least one of its stops: the calendar button inside a date-time input is one more
  // stop, with Chrome's own focus style on the button rather than on the input.
  const ringed = new Set<string>();
  // A date-time input takes a Tab stop per part (day, month, year, hours, minutes).
  for (let i = 0; i < controls.length * 2 + 20; i++) {
    await page.keyboard.press("Tab");
    const f = await page.evaluate(() => {
      const e = document.activeElement as HTMLElement | null;
      if (!e?.dataset.tab) return null;
      const cs = getComputedStyle(e);
      return {
        n: e.dataset.tab,
        ring: cs.outlineStyle !== "none" && Number.parseFloat(cs.outlineWidth) >= 2,
      };
    });
    if (!f) continue;
    reached.add(f.n);
    if (f.ring) ringed.add(f.n);
  }
  return [
    ...controls.filter((_, i) => !reached.has(String(i))).map((c) => `${name}: Tab never reaches ${c}`),
    ...[...reached]
      .filter((n) => !ringed.has(n))
      .map((n) => `${name}: no focus ring on ${controls[Number(n)]}`),
  ];
}

describe.skipIf(!hasChromium)("accessibility of every page (Chromium, axe-core)", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const pages: string[] = [];

  beforeAll(async () => {
    s = await startTestServer({ webhook_allow_private: true });
    await createWorkflow(s, s.rootToken, {
      slug: "notes",
      name: "Notes",
      allowed_file_types: ["TEXT"],
      steps: [{ name: "Lines", validator: "text_rules", config: { max_lines: 2, max_line_length: 5 } }],
    });
    await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
    // A second version, for the history and its comparison.
    const v2 = await call(s, "PATCH", "/api/v1/orgs/acme/workflows/notes/", {
      token: s.rootToken,
      body: { description: "Short notes" },
    });
    expect(v2.status).toBe(200);
    const run = await call(s, "POST", "/api/v1/orgs/acme/workflows/notes/runs/", {
      token: s.rootToken,
      raw: "first line\nsecond line\nthird\n",
      headers: { "content-type": "text/plain" },
    });
    expect(run.status).toBe(201);
    const hook = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: s.rootToken,
      body: { url: "http://127.0.0.1:9/hook", events: ["run.completed"] },
    });
    expect(hook.status).toBe(201);
    await s.user("vera", "acme", "viewer");
    await setPassword(s, "root", PASSWORD);
    browser = await launch();
    page = await axePage(browser, s.url);
    await signIn(page, "root", PASSWORD);
    pages.push(
      "/app/orgs/acme/workflows/",
      "/app/orgs/acme/workflows/notes/",
      "/app/orgs/acme/new-workflow",
      "/app/orgs/acme/workflows/notes/edit",
      "/app/orgs/acme/workflows/notes/run",
      "/app/orgs/acme/workflows/notes/versions/",
      "/app/orgs/acme/workflows/notes/versions/2/",
      "/app/orgs/acme/runs/",
      `/app/orgs/acme/runs/${run.json.id}/`,
      "/app/orgs/acme/members/",
      "/app/orgs/acme/audit/",
      "/app/orgs/acme/webhooks/",
      `/app/orgs/acme/webhooks/${hook.json.id}/`,
      "/app/settings/tokens/",
      "/app/settings/account/",
      "/app/admin/",
      "/app/admin/orgs/",
      "/app/admin/settings/",
    );
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  const open = async (path: string) => {
    await page.goto(path);
    await page.locator("main h1").waitFor();
    await page.waitForLoadState("networkidle");
  };

  test("every page: no axe violation (light and dark), a title, one h1, one main, lang, no sideways scrolling at 320 px", async () => {
    const problems: string[] = [];
    for (const path of pages) {
      await open(path);
      problems.push(...(await audit(page, path)));
    }
    const out = await axePage(browser, s.url);
    await out.goto("/");
    await out.getByLabel("Username").waitFor();
    problems.push(...(await audit(out, "sign-in")));
    // A refused sign-in: the message is an alert, and the page stays clean.
    await out.getByLabel("Username").fill("root");
    await out.getByLabel("Password").fill("wrong password");
    await out.getByRole("button", { name: "Sign in" }).click();
    await out.getByRole("alert").filter({ hasText: "Invalid username or password." }).waitFor();
    problems.push(...(await audit(out, "sign-in refused")));
    await out.context().close();
    expect(problems).toEqual([]);
  });

  test("the setup page (an instance without users): no axe violation, a refused field says why", async () => {
    const empty = await startEmptyServer();
    try {
      const p = await axePage(browser, empty.url);
      await p.goto("/");
      await p.getByLabel("Setup code").waitFor();
      expect(await audit(p, "setup")).toEqual([]);
      // A wrong code: the message is by the field, which names it and takes focus.
      await p.getByLabel("Setup code").fill("AAAA-AAAA");
      await p.getByLabel("Administrator username").fill("ada");
      await p.getByLabel("Password (8 characters or more)").fill("correct horse battery");
      await p.getByLabel("Organization slug (lowercase letters, digits, -)").fill("acme");
      await p.getByRole("button", { name: "Create and sign in" }).click();
      await p.getByRole("alert").filter({ hasText: "The setup code is not the one" }).waitFor();
      const input = p.getByLabel("Setup code");
      expect(await input.getAttribute("aria-invalid")).toBe("true");
      expect(
        await input.evaluate((el) =>
          (el.getAttribute("aria-describedby") ?? "")
            .split(" ")
            .map((id) => document.getElementById(id)?.textContent)
            .join(" "),
        ),
      ).toContain("Copy the setup code from the log of the running server");
      expect(await input.evaluate((el) => el === document.activeElement)).toBe(true);
      expect(await audit(p, "setup refused")).toEqual([]);
      await p.context().close();
    } finally {
      await empty.close();
    }
  });

  test("open dialogs and refused forms have no axe violation; dialogs close with Escape", async () => {
    const problems: string[] = [];
    await open("/app/settings/tokens/");
    const create = page.getByRole("button", { name: "Create token" });
    await create.click();
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    problems.push(...(await axe(page)).map((x) => `token dialog: ${x}`));
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    // Focus moves back on the app's next turn, not with the hiding itself: awaited (bounded), then
    // asserted.
    await page
      .waitForFunction(() => document.activeElement?.textContent?.trim() === "Create token", undefined, {
        timeout: 10_000,
      })
      .catch(() => null);
    expect(await create.evaluate((b) => b === document.activeElement)).toBe(true);

    // A token made in the dialog: focus on its value, which is described by the warning to copy it.
    await create.click();
    await dialog.getByLabel("Name").fill("a11y");
    await dialog.getByRole("button", { name: "Create token" }).click();
    await dialog.waitFor({ state: "hidden" });
    // What the focused element is described by, once focus has moved there (bounded wait; then
    // the assertion below says what it was).
    const description = async (expected: string) => {
      const text = (want: string | null) => {
        const d = (document.activeElement?.getAttribute("aria-describedby") ?? "")
          .split(" ")
          .map((id) => document.getElementById(id)?.textContent)
          .join(" ");
        return want === null ? d : d.includes(want);
      };
      await page.waitForFunction(text, expected, { timeout: 10_000 }).catch(() => null);
      return (await page.evaluate(text, null)) as string;
    };
    const COPY_TOKEN = "Copy this token now. You will not see it again.";
    expect(await description(COPY_TOKEN)).toContain(COPY_TOKEN);
    problems.push(...(await axe(page)).map((x) => `new token: ${x}`));

    // A rotated webhook secret: the same.
    const hooks = await call(s, "GET", "/api/v1/orgs/acme/webhooks/", { token: s.rootToken });
    await open(`/app/orgs/acme/webhooks/${hooks.json.results[0].id}/`);
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Rotate" }).click();
    await page.getByLabel("Signing secret").waitFor();
    const COPY_SECRET = "Copy the signing secret now. You will not see it again.";
    expect(await description(COPY_SECRET)).toContain(COPY_SECRET);
    problems.push(...(await axe(page)).map((x) => `rotated secret: ${x}`));

    // A refused workflow: each message sits by its field, which names it and is marked invalid.
    await open("/app/orgs/acme/new-workflow");
    await page.getByLabel("Name", { exact: true }).fill("Dup");
    await page.getByLabel("Slug").fill("notes");
    await page.getByRole("button", { name: /Create workflow|Save/ }).click();
    await page.locator(".field-error").first().waitFor();
    const invalid = await page.evaluate(() =>
      [...document.querySelectorAll("[aria-invalid=true]")].map((el) => ({
        described: (el.getAttribute("aria-describedby") ?? "")
          .split(" ")
          .some((id) => document.getElementById(id)?.classList.contains("field-error")),
      })),
    );
    expect(invalid.length).toBeGreaterThan(0);
    expect(invalid.every((x) => x.described)).toBe(true);
    expect(await page.getByRole("alert").count()).toBeGreaterThan(0);
    problems.push(...(await axe(page)).map((x) => `refused workflow form: ${x}`));
    expect(problems).toEqual([]);
  });

  test("every control of every page is reached by Tab and shows a focus ring", async () => {
    const problems: string[] = [];
    for (const path of pages) {
      await open(path);
      problems.push(...(await tabWalk(page, path)));
    }
    expect(problems).toEqual([]);
  });

  test("the focus ring and the edges of inputs stand out 3:1 from the page (WCAG 1.4.11), light and dark", async () => {
    await open("/app/orgs/acme/runs/");
    const ratios = async () =>
      page.evaluate(() => {
        const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
        const lum = (c: string) => {
          const [r, g, b] = rgb(c).map((v) => {
            const x = v / 255;
            return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
          });
          return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
        };
        const ratio = (a: string, b: string) => {
          const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
          return Math.round(((hi! + 0.05) / (lo! + 0.05)) * 100) / 100;
        };
        const page = getComputedStyle(document.body).backgroundColor;
        const panel = getComputedStyle(document.querySelector(".filters")!).backgroundColor;
        const input = document.querySelector<HTMLElement>(".filters select")!;
        input.focus();
        const ring = getComputedStyle(input).outlineColor;
        const edge = getComputedStyle(input).borderTopColor;
        return {
          ringOnPage: ratio(ring, page),
          ringOnPanel: ratio(ring, panel),
          edgeOnPanel: ratio(edge, panel),
        };
      });
    // Tab first, so that the focus is keyboard focus (:focus-visible).
    await page.keyboard.press("Tab");
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const r = await ratios();
      expect({ scheme, ok: Object.values(r).every((x) => x >= 3), ...r }).toMatchObject({ scheme, ok: true });
    }
    await page.emulateMedia({ colorScheme: "light" });
  });

  test("the organization menu opens from the keyboard and closes with Escape or when Tab leaves it", async () => {
    await open("/app/orgs/acme/workflows/");
    const summary = page.locator(".org-switch summary");
    const menu = page.locator(".org-switch");
    await summary.focus();
    await page.keyboard.press("Enter");
    expect(await menu.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.closest(".menu") != null)).toBe(true);
    await page.keyboard.press("Escape");
    expect(await menu.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect(await summary.evaluate((x) => x === document.activeElement)).toBe(true);
    // Open again, and Tab on past its last item: it closes rather than staying over the page.
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.closest(".org-switch") == null)).toBe(true);
    expect(await menu.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
  });

  test("the runs list says when a run finishes, and keeps keyboard focus on the link it was on", async () => {
    const gate = s.gates.gate();
    const held = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(held.status).toBe(202);
    await gate.held();
    await open("/app/orgs/acme/runs/");
    const short = held.json.id.slice(-8);
    const link = page.locator(`a[href="/app/orgs/acme/runs/${held.json.id}/"]`);
    await link.focus();
    gate.open("fail");
    await page
      .getByRole("status")
      .filter({ hasText: `Run ${short}: failed.` })
      .waitFor({ state: "attached" });
    await page.locator("tbody tr", { hasText: short }).getByText("failed").waitFor();
    expect(await page.evaluate(() => document.activeElement?.getAttribute("href"))).toBe(
      `/app/orgs/acme/runs/${held.json.id}/`,
    );
    // The table itself is not read out again on every refresh.
    expect(await page.locator("[aria-live] table, [role=status] table").count()).toBe(0);
  });

  test('the run page keeps keyboard focus through "Show more" and "Cancel run"', async () => {
    await createWorkflow(s, s.rootToken, {
      slug: "lines",
      allowed_file_types: ["TEXT"],
      steps: [
        { name: "short lines", validator: "text_rules", config: { max_line_length: 1, max_findings: 2000 } },
      ],
    });
    const many = await call(s, "POST", "/api/v1/orgs/acme/workflows/lines/runs/", {
      token: s.rootToken,
      raw: `${Array.from({ length: 1300 }, (_, i) => `line ${i + 1}`).join("\n")}\n`,
      headers: { "content-type": "text/plain" },
    });
    expect(many.status).toBe(201);
    await open(`/app/orgs/acme/runs/${many.json.id}/`);
    const focused = () =>
      page.evaluate(() => {
        const e = document.activeElement;
        return e === document.body ? "body" : `${e?.tagName.toLowerCase()} ${e?.textContent?.trim()}`;
      });
    await page.getByRole("button", { name: "Show 200 more" }).focus();
    await page.keyboard.press("Enter");
    await page.getByText("Showing 1,200 of 1,300 findings.").waitFor();
    expect(await focused()).toBe("button Show 100 more");
    await page.keyboard.press("Enter");
    await page.getByRole("table", { name: "Findings of step 1" }).locator("tbody tr").nth(1299).waitFor();
    // The button is gone with the last page: focus is on its step's heading, not the page's top.
    expect(await focused()).toBe("h3 1. short lines ✖ failed");

    const gate = s.gates.gate();
    const held = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(held.status).toBe(202);
    await gate.held();
    await open(`/app/orgs/acme/runs/${held.json.id}/`);
    await page.getByRole("button", { name: "Cancel run" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Finished: canceled." }).waitFor();
    expect(await focused()).toBe(`h1 Run ${held.json.id.slice(-8)}`);
  });

  test("a message after an action is said by a live region that was on the page before it", async () => {
    const token = await call(s, "POST", "/api/v1/users/me/tokens/", {
      token: s.rootToken,
      body: { name: "to revoke" },
    });
    expect(token.status).toBe(201);
    // The region is taken before each action: a region inserted with its text already in it (the
    // new page's message after a navigation) is not reliably announced.
    const region = async () =>
      page.evaluate(() => {
        const r = document.querySelector("#announcer");
        (window as unknown as { region: Element | null }).region = r;
        return r?.getAttribute("role");
      });
    const said = () =>
      page.waitForFunction(() => {
        const r = (window as unknown as { region: Element | null }).region;
        return r?.isConnected ? r.textContent : null;
      });

    await open("/app/settings/tokens/");
    expect(await region()).toBe("status");
    await page.getByRole("button", { name: "Revoke token to revoke" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke token" }).click();
    expect(await (await said()).jsonValue()).toBe("Token “to revoke” revoked.");

    // A flash: the page is drawn again, the region stays.
    const hook = await call(s, "GET", "/api/v1/orgs/acme/webhooks/", { token: s.rootToken });
    await open(`/app/orgs/acme/webhooks/${hook.json.results[0].id}/`);
    expect(await region()).toBe("status");
    await page.getByRole("button", { name: "Send ping" }).click();
    expect(await (await said()).jsonValue()).toBe("Ping queued: it appears in the delivery log.");
    // Seen too, in a box that is no second live region.
    const box = page.locator(".notice.success");
    expect(await box.textContent()).toContain("Ping queued");
    expect(await box.getAttribute("role")).toBeNull();
  });

  test("a session that ends is said through the live region, over the sign-in form", async () => {
    const p = await axePage(browser, s.url);
    try {
      await signIn(p, "root", PASSWORD);
      await p.context().clearCookies();
      await p.getByRole("link", { name: "Runs" }).click();
      await p.getByLabel("Username").waitFor();
      const said = await p.waitForFunction(() => document.querySelector("#announcer")?.textContent || null);
      expect(await said.jsonValue()).toBe("Your session has ended. Sign in again to continue.");
      expect(await p.locator("main .notice").getAttribute("role")).toBeNull();
      expect(await audit(p, "sign-in after the session ended")).toEqual([]);
    } finally {
      await p.context().close();
    }
  });
});
