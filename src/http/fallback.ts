// Answers given outside the app's own handling, the same on the main listener and on the HTTP
// threads (src/http/threads/worker.ts): a request whose URL has no authority (no usable Host),
// and the listener's last resort when something throws past the app's error handling. Without
// the latter, Bun answers with its development error page — HTML with the stack and source lines
// — whenever NODE_ENV is not `production` (docs/security.md).
import { AppError } from "../errors.ts";
import { errorResponse } from "./errors.ts";
import { DEFAULT_HEADERS } from "./security.ts";

const HEADERS = { ...DEFAULT_HEADERS, "cache-control": "no-store" };

/**
 * False when Bun could not build an absolute URL for the request: HTTP/1.0 without a Host, or a
 * Host that is empty or not a host (`Host: a b`). Bun then hands over the bare path, which no
 * URL parser of ours accepts; HTTP/1.1 without any Host is refused by Bun itself (400).
 */
export function hasAuthority(request: Request): boolean {
  const u = request.url;
  return u.startsWith("http://") || u.startsWith("https://");
}

/** 400 for a request without a usable Host (RFC 9112 §3.2 asks the same of HTTP/1.1). */
export function hostRequired(): Response {
  return errorResponse(
    new AppError(400, "invalid_request", "The request needs a Host header naming this server.", [
      { field: "Host", code: "required", message: "Send a Host header with this server's host (and port)." },
    ]),
    HEADERS,
  );
}

/** The listener's `error` handler: the app's 500, never Bun's page. */
export function internalError(): Response {
  return errorResponse(new AppError(500, "internal_error", "An internal error occurred."), HEADERS);
}
