// HEAD answered from what a route knows, not by producing the body. The framework answers a HEAD
// by running the route's GET and reading its whole body to count it (Elysia's compose:
// getResponseLength), then says that count in Content-Length: a run's content over 1 MiB was read
// from the database slice by slice for nothing, and said a length that GET, sent as a stream, does
// not (Bun drops Content-Length from a streamed body: oven-sh/bun#10507). A route's GET handler
// that sees a HEAD answers `headAnswer`: no body, and the framing GET would have; the app's
// wrapper (src/app.ts) puts that framing back over the framework's count.

/** The framing of a HEAD's answer, by request: a Content-Length, or null for a chunked body. */
const framing = new WeakMap<Request, string | null>();

/**
 * A HEAD's answer with GET's headers and no body. `length`: GET's Content-Length, or null when
 * GET streams its body (Transfer-Encoding: chunked, no Content-Length).
 */
export function headAnswer(
  request: Request,
  headers: Record<string, string>,
  length: number | null,
): Response {
  framing.set(request, length === null ? null : String(length));
  const h = new Headers(headers);
  if (length === null) h.set("transfer-encoding", "chunked");
  else h.set("content-length", String(length));
  return new Response(null, { headers: h });
}

/**
 * A HEAD's answer with a Date, as GET's has (RFC 9110 §6.6.1: an origin server with a clock MUST
 * send one in every 2xx, 3xx and 4xx; §9.3.2: HEAD sends GET's fields). Bun 1.4.5 adds Date to
 * every answer except a HEAD's that says a Content-Length or is chunked, so it is set here; Bun
 * sends a Date a Response carries as it is, and never a second one.
 */
export function withHeadDate(request: Request, r: Response): Response {
  if (request.method === "HEAD" && !r.headers.has("date")) r.headers.set("date", new Date().toUTCString());
  return r;
}

/**
 * The framework's answer to a HEAD, with the framing headAnswer set (src/app.ts), and a Date
 * (withHeadDate). A 304 says no
 * Content-Length: the framework counted its empty body and said `0`, where RFC 9110 §8.6 allows
 * only the length the 200 would have said, and GET's 304 says none (Bun.serve adds none to a
 * bodiless 304; it sends whatever a Response carries).
 */
export function withHeadFraming(request: Request, r: Response): Response {
  withHeadDate(request, r);
  if (r.status === 304) {
    r.headers.delete("content-length");
    return r;
  }
  const f = framing.get(request);
  if (f === undefined) return r;
  if (f === null) r.headers.delete("content-length");
  else r.headers.set("content-length", f);
  return r;
}
