// CORS in real Chromium: a page served from another origin (a second local port) calls the API
// with a bearer token and the API's own headers, which needs a preflight, and reads the answer
// headers the API exposes. The same page from an origin that is not listed is refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, newPage } from "./browser.ts";

describe.skipIf(!hasChromium)("CORS in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  // Two other origins: one listed in ASSAY_CORS_ORIGINS, one not.
  const page = () =>
    new Response("<!doctype html><title>app</title>", { headers: { "content-type": "text/html" } });
  const listedApp = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: page });
  const otherApp = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: page });

  beforeAll(async () => {
    s = await startTestServer({
      cors_origins: `http://127.0.0.1:${listedApp.port}`,
      rate_limit_disabled: false,
    });
    await createWorkflow(s, s.rootToken, {
      slug: "cors",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    listedApp.stop(true);
    otherApp.stop(true);
  });

  /** From a page of `appUrl`, starts a run on the API with the headers that need a preflight. */
  const startRunFrom = async (appUrl: string) => {
    const p = await newPage(browser, appUrl);
    await p.goto("/");
    const result = await p.evaluate(
      async ({ api, token }) => {
        try {
          const r = await fetch(`${api}/api/v1/orgs/acme/workflows/cors/runs/`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${token}`,
              "content-type": "application/json",
              prefer: "respond-async",
              "idempotency-key": `cors-${Math.random()}`,
            },
            body: '{"a": 1}',
          });
          return {
            status: r.status,
            location: r.headers.get("location"),
            retryAfter: r.headers.get("retry-after"),
            rateLimit: r.headers.get("ratelimit"),
            applied: r.headers.get("preference-applied"),
            body: await r.json(),
          };
        } catch (e) {
          return { error: String(e) };
        }
      },
      { api: s.url, token: s.rootToken },
    );
    await p.context().close();
    return result;
  };

  test("a listed origin starts a run and reads Location, Retry-After, RateLimit", async () => {
    const r = await startRunFrom(`http://127.0.0.1:${listedApp.port}`);
    expect(r).toMatchObject({ status: 202, retryAfter: "1", applied: "respond-async" });
    expect("location" in r && r.location).toBe(`${s.url}/api/v1/orgs/acme/runs/${"body" in r && r.body.id}/`);
    expect("rateLimit" in r && r.rateLimit).toMatch(/"runs";r=\d+;t=\d+/);
  });

  test("an origin that is not listed is refused by the browser", async () => {
    const before = await s.count("runs");
    const r = await startRunFrom(`http://127.0.0.1:${otherApp.port}`);
    expect(r).toEqual({ error: "TypeError: Failed to fetch" });
    // The preflight failed, so the POST was never sent.
    expect(await s.count("runs")).toBe(before);
  });
});
