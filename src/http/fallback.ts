// Answers given outside the app's own handling, the same on the main listener and on the HTTP
// threads (src/http/threads/worker.ts): a request whose URL has no authority (no usable Host),
// and the listener's last resort when something throws past the app's error handling. Without
// the latter, Bun answers with its development error page — HTML with the stack and source lines
// — whenever NODE_ENV is not `production` (docs/security.md).
import { AppError } from "../errors.ts";
import { errorResponse } from "./errors.ts";
import { withHeadDate } from "./head.ts";
import { requestId } from "./request-log.ts";
import { DEFAULT_HEADERS } from "./security.ts";

const HEADERS = { ...DEFAULT_HEADERS, "cache-control": "no-store" };

/** Authorities seen, and whether a URL parser accepts them (a few in practice; bounded). */
const authorities = new Map<string, boolean>();
const MAX_AUTHORITIES = 1024;

/**
 * False when the request's URL cannot be parsed: Bun hands over the bare path for HTTP/1.0
 * without a Host and for a Host that is empty or holds a character no host has (`Host: a b`),
 * and builds a URL no parser accepts from others (`Host: [::1`, `Host: x:99999`, `Host: :80`).
 * HTTP/1.1 without any Host is refused by Bun itself (400); with two, here. Each authority is parsed
 * once.
 */
export function hasAuthority(request: Request): boolean {
  // Two Host lines name no one server (RFC 9112 §3.2: 400). Bun joins them ("a, b") and builds the
  // URL from the first, so links and Locations named whichever host a client put first.
  if (request.headers.get("host")?.includes(",")) return false;
  const u = request.url;
  const start = u.startsWith("http://") ? 7 : u.startsWith("https://") ? 8 : -1;
  if (start < 0) return false;
  const end = u.indexOf("/", start);
  const authority = end < 0 ? u.slice(start) : u.slice(start, end);
  let ok = authorities.get(authority);
  if (ok === undefined) {
    ok = URL.canParse(`http://${authority}/`);
    if (authorities.size >= MAX_AUTHORITIES) authorities.clear();
    authorities.set(authority, ok);
  }
  return ok;
}

/**
 * Over HTTPS, a Host of one or two characters (`https://x/…`): the framework finds the path of
 * such a URL from a fixed offset (src/app.ts, `standardHostname`), which over HTTPS assumes at
 * least three. Answered as a Host this server cannot use, rather than routed to a wrong path.
 */
export function shortTlsAuthority(request: Request): boolean {
  const u = request.url;
  if (!u.startsWith("https://")) return false;
  const end = u.indexOf("/", 8);
  return end >= 0 && end < 11;
}

/**
 * 400 for a request without a usable Host (RFC 9112 §3.2 asks the same of HTTP/1.1), with the
 * request's id as every answer (src/http/request-log.ts).
 */
export function hostRequired(request: Request): Response {
  return withHeadDate(
    request,
    errorResponse(
      new AppError(400, "invalid_request", "The request needs a Host header naming this server.", [
        {
          field: "Host",
          code: "required",
          message: "Send a Host header with this server's host (and port).",
        },
      ]),
      { ...HEADERS, "x-request-id": requestId(request) },
    ),
  );
}

/** The listener's `error` handler: the app's 500, never Bun's page. */
export function internalError(): Response {
  return errorResponse(new AppError(500, "internal_error", "An internal error occurred."), HEADERS);
}

/** The same 500 for a request the app failed on, with its id as every answer (src/http/request-log.ts). */
export function internalErrorFor(request: Request): Response {
  return errorResponse(new AppError(500, "internal_error", "An internal error occurred."), {
    ...HEADERS,
    "x-request-id": requestId(request),
  });
}
