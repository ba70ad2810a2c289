// Real Chromium for the web app's tests (Debian's /usr/bin/chromium driven by playwright-core).
// Where Chromium is absent the browser tests are skipped, loudly; .ci/run installs it.
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Browser, type Page, chromium } from "playwright-core";
import { SYSTEM } from "../../src/audit/actor.ts";
import type { Role } from "../../src/orgs/store.ts";
import { type TestServer, startTestServer } from "../helpers/server.ts";

export const CHROMIUM = process.env.ASSAY_CHROMIUM ?? "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(
    `browser tests SKIPPED: no Chromium at ${CHROMIUM} (apt-get install chromium, or set ASSAY_CHROMIUM).`,
  );

export const SCREENSHOTS = fileURLToPath(new URL("../../docs/screenshots/", import.meta.url));

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A laptop-sized page (1280 wide) in a fresh context: its own cookies. */
export async function newPage(browser: Browser, baseURL: string, width = 1280, height = 800): Promise<Page> {
  const ctx = await browser.newContext({ baseURL, viewport: { width, height }, colorScheme: "light" });
  const page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto("/");
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  // The frame appears once the first page of the app has rendered.
  await page.locator("header.top").waitFor();
}

/**
 * The whole page: the viewport is stretched to it, so sticky bars sit where a reader sees them.
 * Only with ASSAY_SCREENSHOTS=1 (the README's pictures are refreshed on purpose, not by every
 * test run leaving changed files behind).
 */
export async function screenshot(page: Page, name: string, whole = true): Promise<void> {
  if (process.env.ASSAY_SCREENSHOTS !== "1") return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  const size = page.viewportSize()!;
  if (whole) {
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: size.width, height: Math.max(size.height, height) });
  }
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png` });
  await page.setViewportSize(size);
}

/** Gives a test server's user a password, for the web sign-in (they are made with a token only). */
export async function setPassword(s: TestServer, username: string, password: string): Promise<void> {
  const user = await s.deps.users.getByUsername(username);
  await s.deps.users.setPassword(user!.id, await Bun.password.hash(password), SYSTEM);
}

/** Chromium with one page on the server, "root" signed in (with this password). */
export async function rootSignedIn(
  s: TestServer,
  password: string,
): Promise<{ browser: Browser; page: Page }> {
  await setPassword(s, "root", password);
  const browser = await launch();
  const page = await newPage(browser, s.url);
  await signIn(page, "root", password);
  return { browser, page };
}

/** A member of `org` with `role` and this password, and Chromium with one page signed in as them. */
export async function memberSignedIn(
  s: TestServer,
  username: string,
  org: string,
  role: Role,
  password: string,
): Promise<{ browser: Browser; page: Page }> {
  await s.user(username, org, role);
  await setPassword(s, username, password);
  const browser = await launch();
  const page = await newPage(browser, s.url);
  await signIn(page, username, password);
  return { browser, page };
}

/**
 * A server whose org "acme" has a TEXT workflow "notes" (one text_rules step, at most 10 lines),
 * and Chromium with "root" signed in: what the page tests of runs and forms start from.
 * `close` ends both.
 */
export async function notesSignedIn(): Promise<{
  s: TestServer;
  browser: Browser;
  page: Page;
  close(): Promise<void>;
}> {
  const s = await startTestServer();
  const acme = await s.org("acme");
  await s.deps.workflows.create(
    acme,
    {
      slug: "notes",
      name: "Notes",
      allowed_file_types: ["TEXT"],
      steps: [{ name: "Lines", validator: "text_rules", config: { max_lines: 10 } }],
    },
    SYSTEM,
  );
  const { browser, page } = await rootSignedIn(s, "root password 1");
  return {
    s,
    browser,
    page,
    async close() {
      await browser.close();
      await s.close();
    },
  };
}
