// Request ids and the access log (docs/deploy.md, "Logs"). Every answer the app makes carries
// `X-Request-Id`, and the log lines written for a request name it (`request_id`), so a client that
// reports a failed request by its id leads the operator to its line. An id the client or a proxy
// sent is kept when it is a plain token (at most 128 letters, digits and `. _ : / + = @ -`): a
// pipeline can tag its own requests, a proxy's id ties its log to ours, and nothing else can reach
// a log line through the header. Otherwise the server makes one (a random UUID).
// The access log (`ASSAY_ACCESS_LOG`, off by default: a reverse proxy usually keeps one, and a line
// a request costs a sync run ~2 µs) writes one `request` line per answer.
import type { Logger } from "../lib/log.ts";
import { clientIp } from "./client-ip.ts";

const ids = new WeakMap<Request, string>();
const GIVEN = /^[A-Za-z0-9._:/+=@-]{1,128}$/;

/** The request's id: the same for every caller, made on first use. */
export function requestId(request: Request): string {
  let id = ids.get(request);
  if (id === undefined) {
    const given = request.headers.get("x-request-id");
    id = given !== null && GIVEN.test(given) ? given : crypto.randomUUID();
    ids.set(request, id);
  }
  return id;
}

/** The id if the request was given one already (log lines of code that may run outside a request). */
export function knownRequestId(request: Request): string | undefined {
  return ids.get(request);
}

type Server = { requestIP(r: Request): { address: string } | null } | null | undefined;

export interface AccessLog {
  /** The client's address, read when the request arrives (the server forgets it once answered). */
  client(request: Request, server: Server): string | null;
  write(request: Request, client: string | null, route: string, status: number, startedMs: number): void;
}

/**
 * A request's path as log lines write it: what looks like an API token or a webhook secret
 * (`assay_…`, `whsec_…`, 20 characters or more after the prefix) is masked, `assay_***`. A client
 * that pasted its token into a URL (`curl $URL/$TOKEN`) had it written to the access log and to
 * error lines in full; docs/deploy.md says tokens and secrets are never logged. Slugs of that
 * shape are masked too: a price paid for the rule having no exception. A webhook secret is
 * standard base64, so about half hold a `/` (and a client may percent-encode it): after `whsec_`
 * the mask runs over `/` and `%` too, to the end of the path if need be (detail lost, never a
 * secret's tail); a token is base64url and ends at the segment's end.
 */
export function loggedPath(path: string): string {
  return path.includes("_")
    ? path.replace(SECRET_SHAPE, (_, token) => (token ? "assay_***" : "whsec_***"))
    : path;
}
const SECRET_SHAPE = /(assay)_[A-Za-z0-9_+=-]{20,}|whsec_[A-Za-z0-9_+=/%-]{20,}/g;

/** One `request` line per answer: what an operator greps for first. Never the query or headers. */
export function createAccessLog(log: Logger, trustProxy: boolean): AccessLog {
  return {
    client: (request, server) => clientIp(request, server, trustProxy),
    write(request, client, route, status, startedMs) {
      const url = request.url;
      const start = url.indexOf("/", url.indexOf("//") + 2);
      const q = url.indexOf("?", start);
      log.info("request", {
        request_id: requestId(request),
        method: request.method,
        path: start < 0 ? "/" : loggedPath(url.slice(start, q < 0 ? undefined : q)),
        route,
        status,
        duration_ms: Math.round((performance.now() - startedMs) * 10) / 10,
        client,
      });
    },
  };
}
