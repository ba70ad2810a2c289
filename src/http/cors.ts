// CORS (Fetch standard, §3.2 "CORS protocol") for browser apps on other origins, and OPTIONS.
// ASSAY_CORS_ORIGINS lists the origins allowed (default none: no CORS header is ever sent), or
// `*`. Credentials are never allowed (no Access-Control-Allow-Credentials): cross-origin callers
// use a bearer token, so the web app's session cookie is never sent or readable cross-origin, and
// `*` can be safe. Preflights are answered for the methods the path has; the request headers a
// client may send and the answer headers it may read are the API's own (docs/api.md).
import { type AnyElysia, Elysia } from "elysia";
import type { Config } from "../config.ts";

/** Request headers a cross-origin client may send (Authorization is never covered by a wildcard). */
export const CORS_REQUEST_HEADERS = [
  "Authorization",
  "Content-Type",
  "Prefer",
  "Idempotency-Key",
  "X-Filename",
  "Content-Encoding",
  "X-Submission-Mode",
  "If-Match",
  "If-None-Match",
  "X-Request-Id",
];
/** Answer headers a cross-origin client may read, beyond the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = [
  "Location",
  "Retry-After",
  "RateLimit-Policy",
  "RateLimit",
  "Idempotent-Replayed",
  "Preference-Applied",
  "Warning",
  "WWW-Authenticate",
  "Content-Disposition",
  "ETag",
  "X-Request-Id",
];
/** Seconds a browser may cache a preflight: Chromium's ceiling (Firefox allows a day). */
export const CORS_MAX_AGE = 7200;

const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** The Allow list of a path: its routes' methods, HEAD wherever GET is, and OPTIONS. */
export function allowList(routeMethods: string[]): string[] {
  const set = new Set(routeMethods);
  if (set.has("GET")) set.add("HEAD");
  set.add("OPTIONS");
  return METHOD_ORDER.filter((m) => set.has(m));
}

export interface Cors {
  /** Whether answers may go to `origin`; false when CORS is off. */
  allows(origin: string | null): boolean;
  /** The headers of a preflight's answer (added to the Allow answer of OPTIONS). */
  preflight(request: Request, allow: string[]): Record<string, string>;
  /** Adds the CORS headers of an actual request's answer; none when CORS is off. */
  plugin: AnyElysia;
  /** CORS is on (some origin is allowed): answers depend on the request's Origin. */
  enabled: boolean;
}

export function createCors(config: Pick<Config, "cors_origins">): Cors {
  const list = (config.cors_origins ?? "")
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean);
  const any = list.includes("*");
  const origins = new Set(list);
  const enabled = list.length > 0;
  const allows = (origin: string | null) => enabled && origin !== null && (any || origins.has(origin));
  // With a list, the answer depends on Origin: caches must keep answers apart (Fetch §3.2.6).
  const vary = any ? null : "Origin";
  const exposed = CORS_EXPOSED_HEADERS.join(", ");

  // No hook at all when CORS is off: the hot path pays nothing.
  const plugin = new Elysia({ name: "cors" });
  if (enabled)
    plugin.onRequest(({ request, set }) => {
      const h = set.headers as Record<string, string>;
      if (vary) h.vary = vary;
      const origin = request.headers.get("origin");
      if (!allows(origin)) return;
      h["access-control-allow-origin"] = any ? "*" : origin!;
      h["access-control-expose-headers"] = exposed;
    });
  // A route that answers with a Response of its own and a Vary of its own (the web app's files:
  // `Vary: accept-encoding`) kept its Vary over ours, so a cache could serve one origin's answer,
  // Access-Control-Allow-Origin included, to another: Origin is added to it.
  if (vary)
    plugin.onAfterHandle({ as: "global" }, ({ responseValue }) => {
      if (!(responseValue instanceof Response)) return;
      const own = responseValue.headers.get("vary");
      if (own === null || own.split(",").some((v) => v.trim().toLowerCase() === "origin")) return;
      try {
        responseValue.headers.set("vary", `${own}, ${vary}`);
      } catch {
        // immutable headers (Response.redirect()): none of ours has a Vary
      }
    });

  return {
    allows,
    plugin,
    enabled,
    preflight(request, allow) {
      const origin = request.headers.get("origin");
      const headers: Record<string, string> = {};
      if (enabled)
        headers.vary = vary
          ? "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
          : "Access-Control-Request-Method, Access-Control-Request-Headers";
      if (!allows(origin) || !request.headers.has("access-control-request-method")) return headers;
      headers["access-control-allow-origin"] = any ? "*" : origin!;
      headers["access-control-allow-methods"] = allow.join(", ");
      headers["access-control-allow-headers"] = CORS_REQUEST_HEADERS.join(", ");
      headers["access-control-max-age"] = String(CORS_MAX_AGE);
      return headers;
    },
  };
}
