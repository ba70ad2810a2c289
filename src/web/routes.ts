// The web application's pages: "/" (sign-in, or on to the app), "/app/*" (client-side routes,
// all the same HTML) and "/assets/<hashed name>". The app talks to the JSON API; nothing here
// needs authentication — the HTML holds no data.
import { Elysia, t } from "elysia";
import { notFound } from "../errors.ts";
import { noneMatchNames } from "../http/conditional.ts";
import { type Asset, webAssets } from "./assets.ts";

// No inline script or style anywhere: the policy can be strict.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_HEADERS = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  // A page opened from another site gets no handle on this window (and the reverse).
  "cross-origin-opener-policy": "same-origin",
};

/**
 * Whether an Accept-Encoding header accepts gzip (RFC 9110 §12.5.3): named (or `x-gzip`, or `*`
 * when gzip itself is not named) with a weight above 0. `gzip;q=0` refuses it: a word match sent
 * gzip to a client that had said it cannot read it. An `identity` weighed above gzip prefers the
 * plain bytes (§12.4.2), as does a `*` weighed above gzip when identity is not named; without
 * either, gzip wins, as it always could.
 */
export function acceptsGzip(header: string | null): boolean {
  let named: number | null = null;
  let any: number | null = null;
  let identity: number | null = null;
  for (const item of (header ?? "").split(",")) {
    const [coding = "", ...params] = item.split(";").map((p) => p.trim().toLowerCase());
    const q = params.find((p) => /^q\s*=/.test(p));
    const parsed = q === undefined ? 1 : Number(q.slice(q.indexOf("=") + 1).trim());
    const weight = Number.isFinite(parsed) ? parsed : 0;
    if (coding === "gzip" || coding === "x-gzip") named = Math.max(named ?? 0, weight);
    else if (coding === "*") any = weight;
    else if (coding === "identity") identity = weight;
  }
  const gzip = named ?? any ?? 0;
  // Not named, identity is weighed by `*` when there is one (§12.5.3).
  const plain = identity ?? any;
  return gzip > 0 && (plain === null || gzip >= plain);
}

/** Answers with an in-memory file: gzip when accepted, 304 when the ETag matches. */
export function serve(
  asset: Asset,
  request: Request,
  cacheControl: string,
  extra: Record<string, string> = {},
) {
  const gzip = acceptsGzip(request.headers.get("accept-encoding"));
  // Each encoding is its own representation, so it has its own ETag (RFC 9110 §8.8.3).
  const etag = gzip ? `${asset.etag.slice(0, -1)}-gz"` : asset.etag;
  const headers: Record<string, string> = {
    ...extra,
    etag,
    "cache-control": cacheControl,
    vary: "accept-encoding",
  };
  // Compared weakly, any tag of a list, or `*` (RFC 9110 §13.1.2): a proxy that compresses weakens
  // the tag (`W/"…"`), and a cache may send every tag it holds. A malformed header is no match.
  const noneMatch = request.headers.get("if-none-match");
  if (noneMatch !== null && noneMatchNames(noneMatch, etag))
    return new Response(null, { status: 304, headers });
  headers["content-type"] = asset.type;
  if (gzip) headers["content-encoding"] = "gzip";
  return new Response(gzip ? asset.gzip : asset.body, { headers });
}

export function webRoutes() {
  // The HTML is revalidated on every load (cheap: ETag → 304); the hashed files never change.
  const page = async ({ request }: { request: Request }) =>
    serve((await webAssets()).index, request, "no-cache", PAGE_HEADERS);
  const hide = { detail: { hide: true } };
  return new Elysia()
    .get("/", page, hide)
    .get("/app", page, hide)
    .get("/app/*", page, hide)
    .get(
      "/assets/:name",
      async ({ params, request }) => {
        const asset = (await webAssets()).files.get(params.name);
        if (!asset) throw notFound("Asset");
        return serve(asset, request, "public, max-age=31536000, immutable", {
          "x-content-type-options": "nosniff",
        });
      },
      { params: t.Object({ name: t.String() }), ...hide },
    );
}
