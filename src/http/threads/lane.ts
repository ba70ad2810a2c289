// The sync-run lane (issue #26): a run start answered without the web framework, from a wrapper
// around the framework's handler (src/app.ts) — on the main listener and for the requests HTTP
// threads relay (whose bodies the thread may have checked already, handoff.ts). It keeps only
// the pieces that decide something, and they are the app's own functions: the limits' entry
// check (limits.enterRun), authentication and its rate-limit hook (createAuthenticate), the
// route's handler (startRunHandler), the error mapping (errorAnswer), the security headers and
// the request's duration metric. What it skips (routing, the hook chain, the context, copying
// the answer) measured about 5 µs a run (docs/benchmarks.md, ninth pass; thirteenth pass for
// the wrapper). A run start with a query string, an encoded path, a web session, or on a server
// with CORS (answers that depend on Origin) takes the framework's path.
import type { Logger } from "../../lib/log.ts";
import type { Metrics } from "../../metrics/index.ts";
import type { StartRunContext } from "../../runs/start-handler.ts";
import type { Principal } from "../auth.ts";
import { errorAnswer } from "../errors.ts";
import { type AccessLog, requestId } from "../request-log.ts";
import { DEFAULT_HEADERS } from "../security.ts";

/** The route template the framework reports for the run start (the metric's `route` label). */
export const RUN_ROUTE = "/api/v1/orgs/:org_slug/workflows/:workflow/runs/";

type Server = { requestIP(r: Request): { address: string } | null } | null;

/**
 * Answers a run start, or null: the request is not one for the lane (use the framework's path).
 * `path`: the URL's path and query. `server`: the listener that accepted it (a relayed request's
 * peer is in relayedPeer, src/http/peer.ts).
 */
export type RunLane = (request: Request, path: string, server: Server) => Promise<Response> | null;

/**
 * Thrown by the lane's hooks on an HTTP thread that cannot finish the request after all
 * (thread-runs.ts): the lane passes it on, and the main thread answers the request.
 */
export class Relay extends Error {}

/** Requests the lane answered (the relay counts them: assay_http_thread_requests_total). */
export const laned = new WeakSet<Request>();

/** `/api/v1/orgs/{org}/workflows/{workflow}/runs/`, nothing encoded, no query. */
const PLAIN_RUN_PATH = /^\/api\/v1\/orgs\/([^/?#%]+)\/workflows\/([^/?#%]+)\/runs\/$/;
const BEARER = /^bearer /i;

/** The path and query of a request the lane may take on the main listener, or null. */
export function lanePath(request: Request): string | null {
  if (request.method !== "POST") return null;
  const auth = request.headers.get("authorization");
  // A web session's request keeps the framework's path (its CSRF checks are the web app's).
  if (auth === null || !BEARER.test(auth)) return null;
  const url = request.url;
  return url.slice(url.indexOf("/", url.indexOf("//") + 2));
}

export function createRunLane(parts: {
  log: Logger;
  metrics?: Metrics;
  /** The access log's line writer, when ASSAY_ACCESS_LOG is on (src/http/request-log.ts). */
  accessLog?: AccessLog;
  /** CORS answers depend on Origin (src/http/cors.ts): such servers keep the framework's path. */
  cors: boolean;
  enterRun(request: Request, path: string, server: Server, headers: Record<string, unknown>): void;
  authenticate(request: Request, headers: Record<string, unknown>): Promise<Principal>;
  startRun(c: StartRunContext): Promise<Response>;
}): RunLane {
  const { log, metrics } = parts;
  return (request, path, server) => {
    if (parts.cors) return null;
    const m = PLAIN_RUN_PATH.exec(path);
    if (!m) return null;
    return serve(request, path, server, m[1]!, m[2]!);
  };

  async function serve(
    request: Request,
    path: string,
    server: Server,
    org: string,
    workflow: string,
  ): Promise<Response> {
    const t0 = performance.now();
    // The client's address now: the server forgets it once the connection is gone.
    const client = parts.accessLog?.client(request, server) ?? null;
    laned.add(request);
    // What `.headers(DEFAULT_HEADERS)` and the request-id hook (src/app.ts) put in the
    // framework's `set.headers` for every request.
    const headers: Record<string, unknown> = { ...DEFAULT_HEADERS, "x-request-id": requestId(request) };
    let res: Response;
    try {
      parts.enterRun(request, path, server, headers);
      const principal = await parts.authenticate(request, headers);
      res = await parts.startRun({
        params: { org_slug: org, workflow },
        query: {},
        request,
        principal,
        set: { headers },
      });
      // Its answer carries `cache-control: no-store` already (start-handler.ts), as the app's
      // afterHandle hook would add: API answers are per-user, never kept by a shared cache.
    } catch (e) {
      if (e instanceof Relay) throw e;
      res = errorAnswer(log, e, request, headers as Record<string, string>);
    }
    metrics?.httpDuration.observe(
      { route: RUN_ROUTE, method: "POST", status: String(res.status) },
      (performance.now() - t0) / 1000,
    );
    parts.accessLog?.write(request, client, RUN_ROUTE, res.status, t0);
    return res;
  }
}
