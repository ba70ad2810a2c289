// Cross-site request forgery in real Chromium, against the real server: a user signed in to the
// web app opens an attacker's page on another origin of the same site (127.0.0.1, another port:
// SameSite=Lax sends the session cookie with its form posts). Its forms (text/plain JSON,
// multipart, urlencoded) and its fetches (no-cors with the cookie, CORS to read the CSRF token)
// change nothing: no token minted, no run started, no sign-out, no sign-in as the attacker, and
// the CSRF token is never read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createWorkflow, until } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, setPassword, signIn } from "./browser.ts";

const PASSWORD = "root password 1";

/** The attacker's page: every form posts into its own frame. */
const attackPage = (target: string) => `<!doctype html><body>
<iframe name="f1"></iframe><iframe name="f2"></iframe><iframe name="f3"></iframe><iframe name="f4"></iframe>
<form id="token" target="f1" method="post" enctype="text/plain" action="${target}/api/v1/users/me/tokens/">
<input name='{"name":"pwned-form","x":"' value='"}'></form>
<form id="run" target="f2" method="post" enctype="multipart/form-data" action="${target}/api/v1/orgs/acme/workflows/docs/runs/">
<input name="content" value="{}"></form>
<form id="logout" target="f3" method="post" action="${target}/api/v1/auth/logout/"></form>
<form id="login" target="f4" method="post" enctype="text/plain" action="${target}/api/v1/auth/login/">
<input name='{"username":"mallory","password":"${PASSWORD}","x":"' value='"}'></form>
<script src="/attack.js"></script>
</body>`;

const attackScript = (target: string) => `
window.results = {};
for (const id of ["token", "run", "logout", "login"]) document.getElementById(id).submit();
fetch("${target}/api/v1/users/me/tokens/", {
  method: "POST", mode: "no-cors", credentials: "include",
  headers: { "content-type": "text/plain" }, body: '{"name":"pwned-fetch"}',
}).then(() => { window.results.noCors = "answered"; }, (e) => { window.results.noCors = String(e); });
fetch("${target}/api/v1/auth/session/", { credentials: "include" })
  .then((r) => r.json())
  .then((s) => { window.results.read = s.csrf_token; }, () => { window.results.read = "refused"; });
`;

describe.skipIf(!hasChromium)("cross-site requests against a signed-in browser (Chromium)", () => {
  let s: TestServer;
  let attacker: ReturnType<typeof Bun.serve>;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer();
    await setPassword(s, "root", PASSWORD);
    await s.user("mallory", "acme", "viewer");
    await setPassword(s, "mallory", PASSWORD);
    await createWorkflow(s, s.rootToken, {
      slug: "docs",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    attacker = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const js = new URL(req.url).pathname === "/attack.js";
        return new Response(js ? attackScript(s.url) : attackPage(s.url), {
          headers: { "content-type": js ? "text/javascript" : "text/html" },
        });
      },
    });
    browser = await launch();
    ctx = await browser.newContext({ baseURL: s.url });
    page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await signIn(page, "root", PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    attacker?.stop(true);
    await s?.close();
  });

  test("the attacker's forms and fetches change nothing, and read nothing", async () => {
    const evil = await ctx.newPage();
    // Each form's answer, as the browser received it (a 204 loads no frame, so frames are not counted).
    const answers: string[] = [];
    evil.on("response", (r) => {
      if (r.request().resourceType() === "document" && r.request().method() === "POST")
        answers.push(`${new URL(r.url()).pathname} ${r.status()}`);
    });
    await evil.goto(attacker.url.href);
    await evil.waitForFunction(() => {
      const w = window as unknown as { results: Record<string, unknown> };
      return "noCors" in w.results && "read" in w.results;
    });
    await until(() => answers.length === 4, "an answer to each of the four forms");
    expect(answers.sort()).toEqual([
      "/api/v1/auth/login/ 415",
      "/api/v1/auth/logout/ 403",
      "/api/v1/orgs/acme/workflows/docs/runs/ 403",
      "/api/v1/users/me/tokens/ 403",
    ]);
    const results = await evil.evaluate(() => (window as unknown as { results: unknown }).results);
    // The CORS read is refused. (The no-cors post is sent; whether its opaque answer resolves or
    // is withheld by Cross-Origin-Resource-Policy does not matter: the server refused it.)
    expect((results as { read: string }).read).toBe("refused");
    await evil.close();

    const tokens = await call(s, "GET", "/api/v1/users/me/tokens/", { token: s.rootToken });
    expect(tokens.json.results.map((t: { name: string }) => t.name)).toEqual(["root-token"]);
    const runs = await call(s, "GET", "/api/v1/orgs/acme/runs/", { token: s.rootToken });
    expect(runs.json.count).toBe(0);
    // Still root's session, still working: a write from the app goes through.
    await page.goto("/app/settings/tokens/");
    expect(await page.locator("header.top a[title=Account]").textContent()).toBe("root");
    await page.getByRole("button", { name: "Create token" }).click();
    await page.getByRole("dialog").getByLabel("Name", { exact: true }).fill("after");
    await page.getByRole("dialog").getByRole("button", { name: "Create token" }).click();
    await page.getByRole("heading", { name: "New token: after" }).waitFor();
  });
});
