// Hole 1 of issue #19 in real Chromium: an Executor submits documents that carry a script; an
// Admin signed in to the web app (session cookie) opens their content URL — directly, and from an
// attacker's page on another origin of the same site (iframe, object, embed, link), where the
// cookie is sent too. The script would read the CSRF token and mint a token for the attacker; it
// must never run. Before the fix the XML was served inline as application/xml and it did run.
// A control document served by the attacker's own server proves that the payload does run when
// a browser renders it, so silence from the content URLs means something.
import { SYSTEM } from "../../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, signIn } from "./browser.ts";

const PASSWORD = "admin password 1";

/** What an attacker's script does: a beacon at once, then the real attack, then another beacon. */
const PAYLOAD = (tag: string) =>
  `new Image().src='/pwned?${tag}';fetch('/api/v1/auth/session/').then(function(r){return r.json()}).then(function(s){return fetch('/api/v1/users/me/tokens/',{method:'POST',headers:{'content-type':'application/json','x-csrf-token':s.csrf_token},body:JSON.stringify({name:'pwned-${tag}'})})}).then(function(){new Image().src='/pwned?${tag}-done'})`;

const DOCUMENTS: { tag: string; type: string; body: string }[] = [
  {
    tag: "xml",
    type: "application/xml",
    body: `<order><h:script xmlns:h="http://www.w3.org/1999/xhtml">${PAYLOAD("xml")}</h:script></order>`,
  },
  {
    tag: "xhtml",
    type: "application/xhtml+xml",
    body: `<html xmlns="http://www.w3.org/1999/xhtml"><body><script>${PAYLOAD("xhtml")}</script></body></html>`,
  },
  {
    tag: "svg",
    type: "application/xml",
    body: `<svg xmlns="http://www.w3.org/2000/svg"><script>${PAYLOAD("svg")}</script></svg>`,
  },
  {
    tag: "html",
    type: "text/plain",
    body: `<!doctype html><html><body><script>${PAYLOAD("html")}</script></body></html>`,
  },
];

describe.skipIf(!hasChromium)("submitted content never runs as a page of Assay (Chromium)", () => {
  let s: TestServer;
  let attacker: ReturnType<typeof Bun.serve>;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  const hits: string[] = [];
  const urls = new Map<string, string>();

  beforeAll(async () => {
    s = await startTestServer();
    const root = await s.deps.users.getByUsername("root");
    await s.deps.users.setPassword(root!.id, await Bun.password.hash(PASSWORD), SYSTEM);
    const mallory = await s.user("mallory", "acme", "executor");
    await createWorkflow(s, s.rootToken, {
      slug: "docs",
      allowed_file_types: ["XML", "TEXT"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    for (const d of DOCUMENTS) {
      const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/docs/runs/", {
        token: mallory.token,
        raw: d.body,
        headers: { "content-type": d.type },
      });
      expect(r.status).toBe(201);
      urls.set(d.tag, `${s.url}/api/v1/orgs/acme/runs/${r.json.id}/content/`);
    }
    // Another origin of the same site (127.0.0.1, another port): SameSite=Lax sends the cookie.
    attacker = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const u = new URL(req.url);
        if (u.pathname === "/control.xml")
          return new Response(DOCUMENTS[0]!.body.replace(PAYLOAD("xml"), PAYLOAD("control")), {
            headers: { "content-type": "application/xml" },
          });
        const target = urls.get(u.searchParams.get("doc") ?? "")!;
        return new Response(
          `<!doctype html><body>
<iframe src="${target}"></iframe>
<object data="${target}"></object>
<embed src="${target}">
<script>
// Once every frame above has loaded (their scripts, if any, ran while they were parsed), the
// control: the same payload, rendered by this server.
onload = function () {
  var f = document.createElement("iframe");
  f.src = "/control.xml";
  document.body.appendChild(f);
};
</script>
</body>`,
          { headers: { "content-type": "text/html" } },
        );
      },
    });
    browser = await launch();
    ctx = await browser.newContext({ baseURL: s.url, acceptDownloads: true });
    // Every beacon of every page and frame of this browser, whichever origin it goes to.
    await ctx.route("**/pwned*", (route) => {
      hits.push(new URL(route.request().url()).search.slice(1));
      return route.fulfill({ status: 204 });
    });
    page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    await signIn(page, "root", PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    attacker?.stop(true);
    await s?.close();
  });

  /** Root's tokens named by an attack (the one in the test harness excepted). */
  const minted = async () =>
    (await call(s, "GET", "/api/v1/users/me/tokens/", { token: s.rootToken })).json.results
      .map((t: { name: string }) => t.name)
      .filter((n: string) => n.startsWith("pwned"));

  for (const d of DOCUMENTS) {
    test(`${d.tag} (${d.type}): opening the URL downloads the exact bytes; no script runs`, async () => {
      const download = page.waitForEvent("download");
      // A download aborts the navigation: goto rejects, the download event is what counts.
      await page.goto(urls.get(d.tag)!).catch(() => {});
      const file = await (await download).path();
      expect(await Bun.file(file).text()).toBe(d.body);
      // The app still works in this tab, with the same session.
      await page.goto("/app/orgs/acme/workflows/");
      await page.getByRole("heading", { name: "Workflows", level: 1 }).waitFor();
      expect(hits.filter((h) => h.startsWith(d.tag))).toEqual([]);
      expect(await minted()).toEqual([]);
    });

    test(`${d.tag}: framed or embedded by another origin of the site, no script runs`, async () => {
      const p = await ctx.newPage();
      p.on("download", (dl) => void dl.cancel());
      await p.goto(`${attacker.url}?doc=${d.tag}`);
      // The control's beacon comes after the frames loaded: theirs would have come before it.
      await waitFor(() => hits.includes("control"));
      hits.splice(0, hits.length, ...hits.filter((h) => !h.startsWith("control")));
      await p.close();
      expect(hits.filter((h) => h.startsWith(d.tag))).toEqual([]);
      expect(await minted()).toEqual([]);
    });
  }

  test("the web app's run page shows the hostile XML as text, and nothing runs", async () => {
    const id = new URL(urls.get("xml")!).pathname.split("/")[6]!;
    await page.goto(`/app/orgs/acme/runs/${id}/`);
    await page.getByRole("status").filter({ hasText: "Finished:" }).waitFor();
    const viewer = page.getByRole("region", { name: "Submitted content" });
    expect(await viewer.textContent()).toContain("<h:script");
    expect(hits).toEqual([]);
    expect(await minted()).toEqual([]);
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}
