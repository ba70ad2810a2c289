// createApp(deps): the error plugin first, then each feature's routes. It never listens
// (STYLE: Fastify) — src/server.ts (for `assay serve`) and the tests do.
import type { Server } from "bun";
import { type AnyElysia, Elysia } from "elysia";
import { adminRoutes } from "./admin/routes.ts";
import { auditRoutes } from "./audit/routes.ts";
import type { Deps } from "./deps.ts";
import { hasAuthority, hostRequired, shortTlsAuthority } from "./http/fallback.ts";
import {
  type AuthNeed,
  type Principal,
  type SessionAuth,
  authPlugin,
  createAuthenticate,
} from "./http/auth.ts";
import { requireInstanceAdmin, requireOrgRole } from "./orgs/access.ts";
import { createCors } from "./http/cors.ts";
import { bodyMatcher, errorPlugin, methodMatcher } from "./http/errors.ts";
import { withHeadFraming } from "./http/head.ts";
import { healthRoutes } from "./http/health.ts";
import { type SharedBudgets, createLimits } from "./http/limits.ts";
import { createSharedLimiter } from "./http/ratelimit-shared.ts";
import { openapiRoutes } from "./http/openapi/routes.ts";
import { pathParams } from "./http/path-params.ts";
import { queryKeys, queryOnce } from "./http/query.ts";
import { type AccessLog, createAccessLog, requestId } from "./http/request-log.ts";
import { DEFAULT_HEADERS } from "./http/security.ts";
import { createRunLane, lanePath } from "./http/threads/lane.ts";
import { type Metrics, metricsRoutes } from "./metrics/index.ts";
import { orgRoutes } from "./orgs/routes.ts";
import { reportRoutes } from "./reports/routes.ts";
import { findingRoutes } from "./runs/findings-routes.ts";
import { runRoutes } from "./runs/routes.ts";
import { startRunHandler } from "./runs/start-handler.ts";
import { schemaRoutes } from "./schemas/routes.ts";
import { tokenRoutes } from "./tokens/routes.ts";
import { meRoutes } from "./users/routes.ts";
import { validatorRoutes } from "./validators/routes.ts";
import { webAuthRoutes } from "./web/auth-routes.ts";
import { webRoutes } from "./web/routes.ts";
import { type SetupCode, setupRoutes } from "./web/setup-routes.ts";
import { webhookRoutes } from "./webhooks/routes.ts";
import { workflowRoutes } from "./workflows/routes.ts";
import { versionRoutes } from "./workflows/version-routes.ts";

export interface AppOptions {
  sessions?: SessionAuth;
  isDraining?: () => boolean;
  /** Prometheus registry; when given, HTTP durations are recorded and /metrics is served. */
  metrics?: Metrics;
  /** The first-run setup code (src/web/setup-routes.ts); none: the setup form always refuses. */
  setup?: SetupCode;
  /** Called first for every request the app's own listener accepted (HTTP threads' counter). */
  onRequest?: (request: Request) => void;
  /** Budgets shared with the HTTP threads of this process (SQLite; src/http/ratelimit-memory.ts). */
  budgets?: SharedBudgets | null;
}

export function createApp(deps: Deps, opts: AppOptions = {}) {
  let matcher: (path: string) => string[] = () => [];
  let declared = new Map<string, Set<string>>();
  let built: AnyElysia = new Elysia();
  let takesBody: (method: string, path: string) => "none" | "open" | "authed" = () => "none";
  // Several nodes on PostgreSQL count every budget in the database: one budget per client.
  // On SQLite with HTTP threads, in shared memory: one budget per client for all the threads.
  const shared = deps.db.dialect === "postgres" ? createSharedLimiter(deps.db) : (opts.budgets ?? null);
  const limits = createLimits(deps.config, (method, path) => takesBody(method, path), shared);
  const authDeps = {
    tokens: deps.tokens,
    sessions: opts.sessions,
    afterAuth: limits.afterAuth,
    onAuthFailure: limits.onAuthFailure,
    deferredBodyError: limits.deferredBodyError,
    trustProxy: deps.config.trust_proxy,
    // Before validation (src/http/auth.ts): the org's access for its routes, the instance admin
    // for /admin/. The handlers check again (cached), with their own role.
    gate: async (p: Principal, need: AuthNeed, path: string, params: Record<string, string>) => {
      if (path.startsWith("/api/v1/admin/")) return requireInstanceAdmin(p);
      if (params.org_slug !== undefined && path.startsWith("/api/v1/orgs/"))
        return requireOrgRole(deps.orgs, p, params.org_slug, need === true ? "viewer" : need);
    },
  };
  const authenticate = createAuthenticate(authDeps);
  const auth = authPlugin(authDeps, authenticate);
  const cors = createCors(deps.config);
  const startRun = startRunHandler(deps, { beforeRun: limits.beforeRun, session: opts.sessions });
  // A request that matches no route still counts against its token, and says so (RateLimit); a
  // token that fails is a 401 counted against the address like on any route, so an unknown path
  // is no free oracle for guesses. Without an Authorization header: the 404 or 405 as it is.
  const authenticateUnmatched = async (request: Request, headers: Record<string, string>) => {
    if (request.headers.get("authorization") === null) return;
    await authenticate(request, headers);
  };
  const accessLog = deps.config.access_log ? createAccessLog(deps.log, deps.config.trust_proxy) : undefined;
  // The sync-run lane (src/http/threads/lane.ts): the same pieces as the route, no framework.
  const lane = createRunLane({
    log: deps.log,
    metrics: opts.metrics,
    accessLog,
    cors: cors.enabled,
    enterRun: limits.enterRun,
    authenticate,
    startRun,
  });
  const count = opts.onRequest;
  // The server the app listens on (the lane reads the client's address from it).
  const listening = (): Server<unknown> => app.server as Server<unknown>;
  // normalize off: unknown body fields are refused (400) rather than silently dropped.
  // The framework finds a request's path by searching for "/" from a fixed offset: 7 without
  // standardHostname (`http://` and a Host of any length: `Host: x` is legal), 11 with it. Over
  // HTTPS 7 finds the second slash of `https://` and no route matched; 11 needs a Host of 3+
  // characters, and a shorter one is refused in the wrapper below (shortTlsAuthority).
  const tls = deps.config.tls_cert_file !== null;
  const app = new Elysia({ name: "assay", normalize: false, handler: { standardHostname: tls } })
    // Around the framework's handler: a run start the lane takes never enters the framework
    // (no context, no copy of the default headers, no hooks; its answer is whole).
    .wrap((handle, request: Request) => {
      count?.(request);
      // Before anything parses the URL: without an authority it is a bare path (fallback.ts).
      if (!hasAuthority(request) || (tls && shortTlsAuthority(request))) return () => hostRequired(request);
      // A HEAD a route answered from what it knows: its framing, not the framework's count (head.ts).
      if (request.method === "HEAD")
        return (...args: unknown[]) =>
          Promise.resolve(
            (handle as unknown as (...a: unknown[]) => Response | Promise<Response>)(...args),
          ).then((r) => withHeadFraming(request, r));
      const path = lanePath(request);
      const answer: Promise<Response> | null = path === null ? null : lane(request, path, listening());
      return answer === null ? handle : () => answer;
    })
    // Every answer names its request (src/http/request-log.ts), errors and 404s included.
    .onRequest(({ request, set }) => {
      set.headers["x-request-id"] = requestId(request);
    })
    // First: a request the limits refuse before any route (413, 429, 400) is timed and counted too.
    .use(opts.metrics || accessLog ? httpTiming(opts.metrics, accessLog, listening) : new Elysia())
    .use(errorPlugin(deps.log, () => matcher, { cors, authenticate: authenticateUnmatched }))
    // Before the routes' own transforms (authentication, the org gate): a path that names nothing.
    .use(pathParams)
    // After the routes' own checks: a declared query parameter given twice (src/http/query.ts).
    .use(queryOnce(() => declared))
    // Before the limits: a 429 or 413 from them is readable cross-origin too.
    .use(cors.plugin)
    .use(limits.plugin)
    .onAfterHandle({ as: "global" }, ({ set, responseValue }) => {
      // API answers are per-user: never cached by a shared cache. A Response of its own gets the
      // header itself: anything in set.headers makes the framework build a second Response.
      if (responseValue instanceof Response) {
        if (setOwnHeader(responseValue, "cache-control", "no-store")) return;
      }
      set.headers["cache-control"] ??= "no-store";
      // One JSON media type for every answer: `application/json`, as errors have it (CONTRACT §5;
      // RFC 8259 §11 defines no charset parameter: JSON is UTF-8). The framework's Response.json
      // said `application/json;charset=utf-8` for successes (docs/decisions.md).
      if (isJsonValue(responseValue)) set.headers["content-type"] ??= "application/json";
    })
    .use(openapiRoutes(deps.config, () => built))
    .use(healthRoutes(deps.db, opts.isDraining ?? (() => false)))
    .use(meRoutes(deps, auth))
    .use(tokenRoutes(deps, auth))
    .use(orgRoutes(deps, auth))
    .use(workflowRoutes(deps, auth))
    .use(versionRoutes(deps, auth, deps.versions))
    .use(schemaRoutes(deps, auth))
    .use(runRoutes(deps, auth, startRun))
    .use(findingRoutes(deps, auth))
    .use(webhookRoutes(deps, auth, limits.webhookSend))
    .use(reportRoutes(deps, auth))
    .use(validatorRoutes(deps.config, auth))
    .use(adminRoutes(deps, auth))
    .use(auditRoutes(deps, auth))
    .use(webAuthRoutes(deps, auth))
    .use(setupRoutes(deps, opts.setup ?? { code: null }))
    .use(webRoutes())
    .use(opts.metrics ? metricsRoutes(deps, opts.metrics, auth) : new Elysia())
    // Security headers on every answer, errors and 404s included (src/http/security.ts).
    .headers({ ...DEFAULT_HEADERS });
  matcher = methodMatcher(app.routes);
  declared = queryKeys(app.routes);
  takesBody = bodyMatcher(app.routes);
  built = app;
  return app;
}
export type App = ReturnType<typeof createApp>;

/** A value the framework answers as JSON: a plain object or an array. */
function isJsonValue(v: unknown): boolean {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return Array.isArray(v) || proto === Object.prototype || proto === null;
}

/** Sets a header on a Response unless present; false when its headers are immutable. */
function setOwnHeader(r: Response, name: string, value: string): boolean {
  try {
    if (!r.headers.has(name)) r.headers.set(name, value);
    return true;
  } catch {
    return false; // e.g. Response.redirect(): immutable headers
  }
}

/**
 * Request durations by route template (not the raw path: ids would explode the series);
 * `unmatched` for requests answered without a route: unknown paths, 405, OPTIONS, and the limits'
 * refusals that come before routing (413, 429, a body nested too deeply …). The access log's line,
 * when it is on, is written from the same place with the same route and status.
 */
function httpTiming(
  metrics: Metrics | undefined,
  accessLog: AccessLog | undefined,
  listening: () => Server<unknown>,
) {
  const started = new WeakMap<Request, number>();
  const clients = new WeakMap<Request, string | null>();
  return new Elysia({ name: "http-timing" })
    .onRequest(({ request }) => {
      started.set(request, performance.now());
      if (accessLog) clients.set(request, accessLog.client(request, listening()));
    })
    .onAfterResponse({ as: "global" }, ({ request, route, set, responseValue }) => {
      const t0 = started.get(request);
      if (t0 === undefined) return;
      // The status sent, as the framework merges it: a Response's own unless 200, else set.status
      // (a route answering with a Response leaves set.status alone; the error plugin sets it).
      const status =
        responseValue instanceof Response && responseValue.status !== 200
          ? responseValue.status
          : typeof set.status === "number"
            ? set.status
            : 200;
      metrics?.httpDuration.observe(
        { route: route || "unmatched", method: request.method, status: String(status) },
        (performance.now() - t0) / 1000,
      );
      accessLog?.write(request, clients.get(request) ?? null, route || "unmatched", status, t0);
    });
}
