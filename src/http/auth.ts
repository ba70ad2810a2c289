// Bearer authentication as one plugin (a macro with `resolve`), used explicitly by each route
// with `{ auth: true }`. Session cookies of the web app plug in through `sessions`.
import { Elysia } from "elysia";
import { actorOf } from "../audit/actor.ts";
import { type AppError, unauthenticated } from "../errors.ts";
import type { TokenService } from "../tokens/service.ts";
import type { TokenRecord } from "../tokens/store.ts";
import type { User } from "../users/store.ts";
import { clientIp } from "./client-ip.ts";
import { preconditionsPlugin } from "./preconditions.ts";

export interface Principal {
  user: User;
  /** The API token in use; null when the request came with a web session. */
  token: TokenRecord | null;
  /** Set for web sessions. */
  session: { id: number } | null;
  /** The cache generation read at authentication: later checks of this request reuse it. */
  generation?: number;
}

/** Web-session authentication, provided by src/web; null when the request has no session. */
export type SessionAuth = (request: Request) => Promise<Principal | null>;

/** Scheme word is case-insensitive (RFC 9110 §11.1); exactly one space-separated credential. */
export function bearerToken(header: string | null): string | null {
  if (!header) return null;
  const m = /^bearer +(\S+) *$/i.exec(header);
  return m ? m[1]! : null;
}

export interface AuthDeps {
  tokens: TokenService;
  sessions?: SessionAuth;
  /** Called after authentication (rate limits); may throw an AppError. */
  afterAuth?: (
    p: Principal,
    request: Request,
    set: { headers: Record<string, unknown> },
  ) => void | Promise<void>;
  /** Called when authentication fails (per-IP budget for failed attempts). */
  onAuthFailure?: (request: Request) => void | Promise<void>;
  /** A refusal of the request's body kept for after authentication and the gate. */
  deferredBodyError?: (request: Request) => AppError | undefined;
  /** Take the client address from X-Forwarded-For (ASSAY_TRUST_PROXY): recorded in the audit log. */
  trustProxy?: boolean;
  /**
   * Access checked right after authentication, before the body and query are validated: a
   * caller without access gets 404/403, never a 400 about a body it may not send (src/app.ts).
   */
  gate?: (p: Principal, need: AuthNeed, path: string, params: Record<string, string>) => Promise<unknown>;
}

/**
 * What a route needs: `true`, a signed-in caller (and, under /orgs/{org_slug}/, membership); a
 * role, at least that role in the org; the handler still checks its own (cached) access.
 */
export type AuthNeed = true | "viewer" | "executor" | "author" | "admin";

/**
 * Who sent the request, then the hook of the rate limits; throws 401 (or 429). Headers for the
 * answer (Warning, RateLimit-*) go into `headers`. The plugin below runs it for every route with
 * `{ auth: true }`; the sync-run lane of the HTTP threads (src/http/threads/lane.ts) calls it alone.
 */
export function createAuthenticate(deps: AuthDeps) {
  return async (request: Request, headers: Record<string, unknown>): Promise<Principal> => {
    let principal: Principal | null = null;
    try {
      const header = request.headers.get("authorization");
      if (header !== null) {
        const presented = bearerToken(header);
        if (!presented) throw unauthenticated("Use the Authorization header with the Bearer scheme.");
        const v = await deps.tokens.verify(presented);
        if (v.warning) headers.warning = v.warning;
        principal = { user: v.user, token: v.token, session: null, generation: v.generation };
      } else if (deps.sessions) {
        principal = await deps.sessions(request);
      }
      if (!principal) throw unauthenticated();
    } catch (e) {
      // May throw a 429 instead (the address's budget, counted in PostgreSQL, is spent).
      const failed = deps.onAuthFailure?.(request);
      if (failed) await failed;
      throw e;
    }
    // Awaited only when it returns a promise: the limits' hook is synchronous in memory (one
    // node), and an await of undefined still costs a turn of the microtask queue per request.
    const after = deps.afterAuth?.(principal, request, { headers });
    if (after) await after;
    return principal;
  };
}

interface TransformContext {
  request: Request;
  set: { headers: unknown };
  path?: string;
  params?: unknown;
}

/** The transforms of the `auth` macro: a route whose hooks hold one authenticates (bodyMatcher). */
const authTransforms = new WeakSet<object>();
const marked = <F extends object>(fn: F): F => {
  authTransforms.add(fn);
  return fn;
};
/** Whether a route's transform hooks include authentication. */
export const authenticates = (transforms: unknown): boolean =>
  Array.isArray(transforms) &&
  transforms.some((h) => authTransforms.has(((h as { fn?: object })?.fn ?? h) as object));

export function authPlugin(deps: AuthDeps, authenticate = createAuthenticate(deps)) {
  // Authentication runs in `transform`, before body and query validation: a request without a
  // valid token gets 401, never a 400 about its body (CONTRACT §4: the token is checked first).
  const authenticated = new WeakMap<Request, Principal>();
  // With the `preconditions` option (src/http/preconditions.ts): every route module uses this plugin.
  return new Elysia({ name: "auth" }).use(preconditionsPlugin).macro({
    auth: (need: AuthNeed) => ({
      transform: marked(async ({ request, set, path, params }: TransformContext) => {
        const principal = await authenticate(request, set.headers as Record<string, unknown>);
        authenticated.set(request, principal);
        // `path` is not set in every route's transform (a route outside a prefixed group: /metrics).
        if (deps.gate)
          await deps.gate(
            principal,
            need,
            path ?? new URL(request.url).pathname,
            (params ?? {}) as Record<string, string>,
          );
        // A body the route cannot take, found on entry (src/http/limits.ts): refused now, once
        // the caller is known to be allowed here.
        const refused = deps.deferredBodyError?.(request);
        if (refused) throw refused;
      }),
      // `actor`: who and from where, for the audit entry of every write (src/audit/).
      resolve: ({ request, server }) => {
        const principal = authenticated.get(request)!;
        return {
          principal,
          actor: actorOf(principal, () => clientIp(request, server, deps.trustProxy ?? false)),
        };
      },
    }),
  });
}
