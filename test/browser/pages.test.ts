// What the server sends for the web app, checked without a browser: one HTML page for every app
// path with a strict CSP, revalidated by ETag; content-hashed assets cached for a year, gzipped.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "../helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);

describe("the app's HTML", () => {
  test("the same page for /, /app and any /app/… path, with security headers", async () => {
    const bodies = new Set<string>();
    for (const path of ["/", "/app", "/app/orgs/acme/runs/0190f0a0-0000-7000-8000-000000000000/"]) {
      const r = await fetch(s.url + path);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/html;charset=utf-8");
      expect(r.headers.get("cache-control")).toBe("no-cache");
      expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(r.headers.get("x-frame-options")).toBe("DENY");
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      bodies.add(await r.text());
    }
    expect(bodies.size).toBe(1);
    const [html] = [...bodies];
    expect(assetsOf(html!).map((a) => a.replace(/-[a-z0-9]+\./, "-HASH."))).toEqual([
      "/assets/chunk-HASH.css",
      "/assets/chunk-HASH.js",
    ]);
    expect(html).not.toContain("<script>"); // no inline script: the CSP allows none
  });

  test("304 Not Modified when the ETag still matches", async () => {
    const first = await fetch(`${s.url}/app/`);
    const again = await fetch(`${s.url}/app/`, { headers: { "if-none-match": first.headers.get("etag")! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  test("405 method_not_allowed for a POST to a page", async () => {
    const r = await call(s, "POST", "/app/orgs/acme/");
    expect(r.status).toBe(405);
    expect(r.json).toEqual(errorBody(405, "method_not_allowed", "Method POST is not allowed on this path."));
  });
});

describe("/assets/", () => {
  test("hashed files are immutable for a year, gzipped when the client accepts it", async () => {
    const html = await (await fetch(`${s.url}/`)).text();
    const js = assetsOf(html).find((a) => a.endsWith(".js"))!;
    const plain = await fetch(s.url + js, { headers: { "accept-encoding": "identity" }, decompress: false });
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("content-type")).toBe("text/javascript;charset=utf-8");
    expect(plain.headers.get("content-encoding")).toBeNull();
    const body = await plain.text();
    expect(body.length).toBeGreaterThan(1000);
    const gz = await fetch(s.url + js, { headers: { "accept-encoding": "gzip" }, decompress: false });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gz.headers.get("etag")).not.toBe(plain.headers.get("etag"));
    const packed = new Uint8Array(await gz.arrayBuffer());
    expect(packed.length).toBeLessThan(body.length / 2);
    expect(new TextDecoder().decode(Bun.gunzipSync(packed))).toBe(body);
  });

  test("404 not_found for a file that is not part of the app", async () => {
    const r = await call(s, "GET", "/assets/chunk-nope.js");
    expect(r.status).toBe(404);
    expect(r.json).toEqual(errorBody(404, "not_found", "Asset not found."));
  });
});
