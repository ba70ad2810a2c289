// Security headers (docs/security.md). Every answer of the server is data for a program or a page
// of our own app; none may be turned against the user whose browser holds the session cookie:
// - API answers get a CSP that loads nothing, runs nothing (`sandbox`) and may not be framed, plus
//   nosniff, no Referer, and a resource policy that keeps other sites from embedding them.
// - Submitted content is an attacker's document served from our origin: a download of plain bytes.
// - The web app's pages and the API docs page carry their own policies (src/web/routes.ts, here).
// The headers are static objects: Elysia copies the defaults into each request's `set.headers`
// (one Object.assign), so the run endpoint pays no more than that.

/** Nothing loads, nothing runs, nothing frames it: JSON, errors, reports other than HTML. */
export const API_CSP =
  "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; sandbox";

/** On every answer unless the route sets its own value (the framework keeps a route's headers). */
export const DEFAULT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": API_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
});

/**
 * Submitted bytes: never a document. `attachment` makes a browser save them instead of rendering
 * them; octet-stream plus nosniff leaves no type to render them as if it did; the sandboxing CSP
 * stops scripts should it render anyway (an old or odd client); frame-ancestors and CORP stop
 * other sites from framing or embedding them. The declared type is the run's
 * `submission.content_type`.
 */
export function contentHeaders(filename: string): Record<string, string> {
  return {
    "content-type": "application/octet-stream",
    "content-disposition": attachment(filename),
    "content-security-policy": "default-src 'none'; frame-ancestors 'none'; sandbox",
    "x-content-type-options": "nosniff",
    "cross-origin-resource-policy": "same-origin",
    "cache-control": "no-store",
  };
}

/**
 * `attachment` with an ASCII fallback name and the exact name in RFC 8187 form (RFC 6266 §4.3):
 * every client gets a safe name, those that read `filename*` the real one.
 */
export function attachment(filename: string): string {
  // One "_" a character (u: an emoji is one, not its two UTF-16 code units).
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%;]/gu, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRFC8187(filename)}`;
}

const encodeRFC8187 = (s: string) =>
  encodeURIComponent(s.toWellFormed()).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
