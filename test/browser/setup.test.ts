// The first run in Chromium against the built binary on an empty data dir: the page offers the
// setup form (not a sign-in nobody can pass), refuses a wrong setup code, and with the code from
// the server's log creates the first admin and org and lands signed in, in the app.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { BINARY, ensureBinary } from "../helpers/binary.ts";
import { hasChromium, launch, newPage, screenshot } from "./browser.ts";

/** Starts `assay serve` on an empty data dir; resolves with its address and setup code. */
export async function serveFresh(dataDir: string) {
  const proc = Bun.spawn([BINARY, "serve", "--port", "0", "--data-dir", dataDir, "--log-level", "warn"], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  let out = "";
  const pattern = /listening on (http:\/\/\S+)[\s\S]*setup code ([A-Z2-9]{4}-[A-Z2-9]{4})/;
  while (!pattern.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const [, url, code] = pattern.exec(out)!;
  return { proc, url: url!, code: code! };
}

describe.skipIf(!hasChromium)("first run in Chromium", () => {
  const dir = mkdtempSync(join(tmpdir(), "assay-first-run-"));
  let server: Awaited<ReturnType<typeof serveFresh>>;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ensureBinary();
    server = await serveFresh(join(dir, "data"));
    browser = await launch();
    page = await newPage(browser, server.url);
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    server?.proc.kill("SIGTERM");
    await server?.proc.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  const fill = async (code: string) => {
    await page.getByLabel("Setup code").fill(code);
    await page.getByLabel("Administrator username").fill("ada");
    await page.getByLabel("Password (8 characters or more)").fill("correct horse battery");
    await page.getByLabel("Organization slug (lowercase letters, digits, -)").fill("acme");
    await page.getByLabel("Organization name (optional)").fill("ACME Ltd");
    await page.getByRole("button", { name: "Create and sign in" }).click();
  };

  test("the page offers the setup form, not a sign-in", async () => {
    await page.goto("/");
    await page.getByRole("heading", { name: "Set up Assay" }).waitFor();
    expect(await page.getByRole("button", { name: "Sign in", exact: true }).count()).toBe(0);
    await screenshot(page, "setup", false);
  });

  test("a wrong setup code is refused next to the form; nothing is created", async () => {
    await fill("AAAA-AAAA");
    await page.getByText("The setup code is not the one in the server's log.").waitFor();
    const needed = await page.evaluate(async () => (await (await fetch("/api/v1/setup/")).json()).needed);
    expect(needed).toBe(true);
  });

  test("the code from the log creates the admin and the org and signs in", async () => {
    await fill(server.code);
    await page.locator("header.top").waitFor();
    await page.waitForURL(/\/app\/orgs\/acme\/workflows\/$/);
    const me = await page.evaluate(async () => (await (await fetch("/api/v1/users/me/")).json()).username);
    expect(me).toBe("ada");
    // A fresh browser now gets the sign-in form, and the password works there.
    const other = await newPage(browser, server.url);
    await other.goto("/");
    await other.getByLabel("Username").fill("ada");
    await other.getByLabel("Password").fill("correct horse battery");
    await other.getByRole("button", { name: "Sign in" }).click();
    await other.locator("header.top").waitFor();
  });
});
