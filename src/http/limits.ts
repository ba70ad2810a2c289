// Limits on every request before a handler spends anything on it (CONTRACT §8, docs/limits.md):
// - body size: a JSON 413 for any body over the limit, from Content-Length before a byte is
//   read, or while reading a body sent without one. The run endpoint is left to its own
//   readBody (max_payload_bytes), which refuses at the contract's step 6, after 404/403/409.
// - nesting: API bodies deeper than 256 levels are a 400 before Elysia parses and validates them.
// - shape: an API body (the run endpoint aside) is a JSON object: another Content-Type is a 415,
//   JSON that is not an object (null, [], 1) or no body where the route takes one is a 400.
//   Elysia would otherwise turn null or [] into {} (a PATCH that changed nothing, yet saved) and
//   a text/plain string into an object of its characters (59 "Property '55'…" items).
// - rate limits: per client IP for failed authentication (checked before authenticating, so a
//   flood of guesses stops being verified), per token and per user for every request, and per
//   token and per user for starting runs (the contract's step 4). The per-user budgets hold all of
//   a user's tokens and sessions together: a hundred tokens do not buy a hundred budgets.
//   Answers carry RateLimit-Policy and RateLimit. On PostgreSQL the budgets are counted in the
//   database (src/http/ratelimit-shared.ts), so several nodes give a client one budget, not one
//   per node; on SQLite (one node) in memory, in shared memory when several HTTP threads serve
//   runs (src/http/ratelimit-memory.ts). The same GCRA, the same answers.
import { Elysia } from "elysia";
import type { Config } from "../config.ts";
import { AppError, malformedBody } from "../errors.ts";
import { quote } from "../lib/text.ts";
import type { Principal } from "./auth.ts";
import { scanBody } from "./body-shape.ts";
import { readBody, tooLarge } from "./body.ts";
import { peerAddress } from "./peer.ts";
import {
  type Decision,
  type Policy,
  RateLimiter,
  uncountedOf,
  ipKey,
  limitHeader,
  policyHeader,
} from "./ratelimit.ts";
import type { Budget } from "./ratelimit-shared.ts";

const RUN_PATH = /^\/api\/v1\/orgs\/[^/]+\/workflows\/[^/]+\/runs\/?$/;
/** Stored schemas may be XSD documents of megabytes (UBL's aggregate components: 2.4 MB). */
const SCHEMA_PATH = /^\/api\/v1\/orgs\/[^/]+\/schemas\/(?:[^/]+\/?)?$/;
/** The body limit there: an 8 MiB XSD, escaped into JSON (quotes double in size). */
export const SCHEMA_BODY_BYTES = 20 * 1_048_576;
/** Probes of load balancers and orchestrators are never refused. */
const UNLIMITED_PATHS = new Set(["/healthz", "/readyz"]);
const NO_BODY_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const JSON_TYPE = /^\s*application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;
/** What the framework parses as JSON: application/json, with parameters (not +json types). */
const API_JSON = /^\s*application\/json\s*(?:;|$)/i;
const API_JSON_TYPE = /^\s*application\/json\s*/i;
/** Nesting accepted in API request bodies (submitted documents have their own bound: 512). */
export const MAX_BODY_DEPTH = 256;
/**
 * Structural characters (`{ [ , :`) accepted in an API request body: a stored JSON Schema (at
 * most 1 MiB) holds about 100,000; parsing 200,000 costs the HTTP thread at most ~0.2 s (one
 * object of 100,000 members, the worst shape), against 5 s for a 20 MiB body before (#19).
 */
export const MAX_BODY_TOKENS = 200_000;

interface RequestState {
  headers: Record<string, unknown>;
  isRun: boolean;
  ip: string;
  /** The route's body: none, without authentication, or with it. */
  route?: "none" | "open" | "authed";
  /** The body's refusal, answered once authentication and the access gate passed. */
  deferred?: AppError;
  /** The per-token and per-user decisions, once counted (shown again beside a route's own budget). */
  general?: Pair;
}
interface RunState {
  headers: Record<string, unknown>;
  key: string;
  userKey: string;
  /** The per-token and per-user decisions on the request itself, enforced at step 4. */
  general: [Decision, Decision];
}
type Server = { requestIP(r: Request): { address: string } | null } | null | undefined;

const tooDeep = () =>
  new AppError(400, "invalid_request", "The request body is nested too deeply.", [
    {
      field: "body",
      code: "too_deep",
      message: `Nesting deeper than ${MAX_BODY_DEPTH} levels is not accepted.`,
    },
  ]);

/**
 * Whether brackets nest deeper than `max`: one pass, no parsing. In JSON, brackets inside
 * strings do not count; in other bodies (forms, whose fields the parser may read as JSON) every
 * bracket counts, so that a stray quote cannot hide a deep value.
 */
export function nestingExceeds(bytes: Uint8Array, max: number, json: boolean): boolean {
  return scanBody(bytes, max, Number.POSITIVE_INFINITY, json) === "too_deep";
}

const tooManyValues = () =>
  new AppError(400, "invalid_request", "The request body holds too many values.", [
    {
      field: "body",
      code: "too_many_values",
      message: `A body may hold at most ${MAX_BODY_TOKENS} brackets, commas and colons (about ${MAX_BODY_TOKENS / 2} object members).`,
    },
  ]);

const notJson = (contentType: string | null) =>
  new AppError(
    415,
    "unsupported_media_type",
    `This endpoint takes a JSON object: send it as Content-Type: application/json${
      contentType ? `, not ${quote(contentType)}` : ""
    }.`,
  );
/** No coding at all: an empty Content-Encoding or `identity` (RFC 9110 §8.4.1). */
const IDENTITY = /^\s*(?:identity\s*)?$/i;
// Accept-Encoding on the 415 names the codings taken (RFC 9110 §15.5.16, §12.5.3): none.
const notDecoded = (coding: string) =>
  new AppError(
    415,
    "unsupported_media_type",
    `Content-Encoding ${quote(coding)} is not supported on this endpoint; send the JSON object without one.`,
    [],
    { "Accept-Encoding": "identity" },
  );
const notAnObject = () =>
  new AppError(400, "invalid_request", "The request body must be a JSON object.", [
    { field: "body", code: "invalid", message: "The body must be a JSON object ({…})." },
  ]);
const missingBody = () =>
  new AppError(400, "invalid_request", "The request body is missing.", [
    { field: "body", code: "required", message: "This endpoint takes a JSON object ({…})." },
  ]);
const notUtf8 = () =>
  new AppError(400, "invalid_request", "The request body is not valid UTF-8.", [
    {
      field: "body",
      code: "invalid_encoding",
      message: "A JSON body is UTF-8 (RFC 8259 §8.1); this one holds bytes that are not.",
    },
  ]);
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
/** Whether the bytes are UTF-8 (a leading BOM allowed): the framework's decoder would put U+FFFD for the rest. */
const isUtf8 = (bytes: Uint8Array) => {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
};

/** The first byte that is not JSON whitespace (or a UTF-8 BOM), or -1. */
function firstSignificant(bytes: Uint8Array): number {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return b;
    i++;
  }
  return -1;
}

const incomplete = () =>
  new AppError(400, "invalid_request", "The request body was not received in full.", [
    { field: "body", code: "incomplete", message: "The connection ended before the body did." },
  ]);

const rateLimited = (d: Decision, what: string) =>
  new AppError(429, "rate_limited", `Too many ${what}; retry in ${d.retryAfterSeconds} s.`, [], {
    "Retry-After": String(d.retryAfterSeconds),
  });

type Pair = [Decision, Decision];

/**
 * Budgets kept beyond this thread, checked all or nothing: in PostgreSQL for several nodes
 * (ratelimit-shared.ts, a promise), in shared memory for several HTTP threads of one process
 * (ratelimit-memory.ts, at once). `tat`: a key's stored TAT, where it can be read at once.
 */
export interface SharedBudgets {
  take(budgets: Budget[]): (Decision & { tat: number })[] | Promise<(Decision & { tat: number })[]>;
  tat?(policy: Policy, key: string): number;
}

/**
 * One request against a token's budget and its user's: counted in both only when both allow it
 * (a refused request costs nothing). Returns both decisions; a promise when they are counted in
 * PostgreSQL (`shared`), at once in memory — the one-node path pays no turn of the event loop.
 */
function takeBoth(
  shared: SharedBudgets | null,
  token: RateLimiter,
  tokenKey: string,
  user: RateLimiter,
  userKey: string,
): Pair | Promise<Pair> {
  if (shared)
    return shared.take([
      { policy: token.policy, key: tokenKey },
      { policy: user.policy, key: userKey },
    ]) as Promise<unknown> as Promise<Pair>;
  const t = token.peek(tokenKey);
  const u = user.peek(userKey);
  // Refused: neither budget counts it, so both are shown as they stand (peek shows what would be
  // left had it been counted: the budget that allowed it one request short).
  if (!t.allowed || !u.allowed) return [token.uncounted(tokenKey), user.uncounted(userKey)];
  return [token.take(tokenKey), user.take(userKey)];
}

/** Runs `then` on a value that may still be a promise, staying synchronous when it is not. */
const andThen = <T, R>(v: T | Promise<T>, then: (x: T) => R): R | Promise<R> =>
  v instanceof Promise ? v.then(then) : then(v);

/**
 * The 429 for a pair of decisions: the token's budget named first, the longer wait given. The
 * first budget is the caller's own (principalKey): a token's, or a web session's — the web app's
 * message said "with this token", though it has none.
 */
function refusal(
  [t, u]: [Decision, Decision],
  what: "requests" | "runs started",
  p: Principal,
): AppError | null {
  if (t.allowed && u.allowed) return null;
  const worst = !t.allowed && (u.allowed || t.retryAfterSeconds >= u.retryAfterSeconds) ? t : u;
  const own = !p.token && p.session ? "in this web session" : "with this token";
  return rateLimited(worst, `${what} ${worst === t ? own : "by this user (all tokens together)"}`);
}

/** The client's address: the socket peer, or with trust_proxy the address the proxy appended. */
export function clientAddress(request: Request, server: Server, trustProxy: boolean): string {
  if (trustProxy) {
    const hops = request.headers.get("x-forwarded-for")?.split(",");
    const last = hops?.[hops.length - 1]?.trim();
    if (last) return ipKey(last);
  }
  const peer = peerAddress(request, server);
  return peer ? ipKey(peer) : "unknown";
}

const principalKey = (p: Principal) =>
  p.token ? `t:${p.token.id}` : p.session ? `s:${p.session.id}` : `u:${p.user.id}`;

/** What a refused or ignored body is relabelled as: no framework parser reads it. */
// (The framework picks its parser by the 13th character: "v" is none of its own.)
const UNREAD_TYPE = "application/vnd.assay.unread";
const utf8 = new TextDecoder();
const parsesAsJson = (bytes: Uint8Array) => {
  try {
    JSON.parse(utf8.decode(bytes)); // the decoder drops a leading BOM, as the framework's does
    return true;
  } catch {
    return false;
  }
};

/**
 * `takesBody(method, path)`: "none" when the route has no body schema, "open" when it has one and
 * no authentication (sign-in, setup), "authed" when it has both; known once the app's routes are
 * (src/app.ts). A body an authenticated route cannot take (not JSON, not an object, missing,
 * malformed) is refused only after authentication and the access gate (`deferredBodyError`,
 * thrown by src/http/auth.ts): without a valid token it is a 401, and a caller who may not use
 * the route gets its 403 or 404, never a 400 about a body it may not send (docs/access.md).
 * Size, nesting and breadth are refused at once: they protect the parser itself.
 */
export function createLimits(
  config: Config,
  takesBody: (method: string, path: string) => "none" | "open" | "authed" = () => "none",
  shared: SharedBudgets | null = null,
) {
  const enabled = !config.rate_limit_disabled;
  const perToken = new RateLimiter({
    name: "default",
    limit: config.rate_limit_per_minute,
    windowSeconds: 60,
  });
  const perTokenRuns = new RateLimiter({
    name: "runs",
    limit: config.rate_limit_runs_per_minute,
    windowSeconds: 60,
  });
  const perUser = new RateLimiter({
    name: "user",
    limit: config.rate_limit_user_per_minute,
    windowSeconds: 60,
  });
  const perUserRuns = new RateLimiter({
    name: "user-runs",
    limit: config.rate_limit_user_runs_per_minute,
    windowSeconds: 60,
  });
  const perIp = new RateLimiter({ name: "ip", limit: config.rate_limit_ip_per_minute, windowSeconds: 60 });
  // Pings and redeliveries queue deliveries with no run behind them: a budget per webhook (all its
  // admins together), below what a slow endpoint drains at its bound in flight (docs/webhooks.md).
  const perWebhook = new RateLimiter({
    name: "webhook-sends",
    limit: config.rate_limit_webhook_sends_per_minute,
    windowSeconds: 60,
  });
  // The policies never change: their header values are built once.
  const generalPolicy = policyHeader([perToken.policy, perUser.policy]);
  const runPolicy = policyHeader([perToken.policy, perUser.policy, perTokenRuns.policy, perUserRuns.policy]);
  const ipPolicy = policyHeader([perIp.policy]);
  const webhookPolicy = policyHeader([perToken.policy, perUser.policy, perWebhook.policy]);
  const requests = new WeakMap<Request, RequestState>();
  const runs = new WeakMap<Principal, RunState>();
  // Shared mode: the per-address budget for failed authentication is counted in PostgreSQL when
  // an attempt fails; this node remembers the TAT it last saw per address and refuses from it
  // before authenticating, as the in-memory limiter does. Another node learns of a spent budget
  // at its own next failed attempt from that address (that one attempt is refused with 429).
  const ipTats = new Map<string, number>();
  /** The address's budget as it stands (this request counted nowhere yet): refused or not, and r and t. */
  const ipStanding = (ip: string): Decision => {
    if (!shared) return perIp.uncounted(ip);
    const key = `ip:${ip}`;
    const now = Date.now();
    return uncountedOf(
      perIp.policy,
      now,
      shared.tat ? shared.tat(perIp.policy, key) : (ipTats.get(ip) ?? now),
    );
  };

  const show = (headers: Record<string, unknown>, policy: string, decisions: Decision[]) => {
    headers["ratelimit-policy"] = policy;
    headers.ratelimit = limitHeader(decisions);
  };

  /**
   * The address's budget for failed authentication, checked before authenticating. `shown`: its
   * headers are set now, so that every answer carries RateLimit-Policy and RateLimit (CONTRACT §8)
   * — the probes', the public operations', a tokenless 404 — and authentication replaces them with
   * the token's. A run start skips that (its answer always has a token's or the address's).
   */
  const enterLimited = (
    request: Request,
    server: Server,
    path: string,
    headers: Record<string, unknown>,
    shown: boolean,
  ) => {
    if (!enabled) return "";
    const ip = clientAddress(request, server, config.trust_proxy);
    const unlimited = UNLIMITED_PATHS.has(path);
    if (unlimited && !shown) return ip;
    const d = ipStanding(ip);
    if (shown || !d.allowed) show(headers, ipPolicy, [d]);
    if (!d.allowed && !unlimited) throw rateLimited(d, "failed authentication attempts from this address");
    return ip;
  };

  const plugin = new Elysia({ name: "limits" }).onRequest(async (c) => {
    const { request, set } = c;
    const path = new URL(request.url).pathname;
    const isRun = request.method === "POST" && RUN_PATH.test(path);
    const ip = enterLimited(request, c.server as Server, path, set.headers, !isRun);
    if (!isRun && !NO_BODY_METHODS.has(request.method)) {
      let bytes: Uint8Array = new Uint8Array(0);
      if (request.body) {
        const max = SCHEMA_PATH.test(path)
          ? Math.max(config.max_body_bytes, SCHEMA_BODY_BYTES)
          : config.max_body_bytes;
        const declared = request.headers.get("content-length");
        if (declared !== null && Number(declared) > max) throw tooLarge(max);
        // Read a copy under the limit (the framework's parser reads whole bodies, and a chunked
        // one has no length to check), and refuse deep nesting before the parser and the schema
        // validator recurse through it. The original stays with its socket (server.requestIP).
        // The copy is one branch of a tee: readBody stops it at the limit without awaiting its
        // cancel, which settles only once the original is cancelled too (Bun does so once the
        // 413 is written, and discards the rest of the body): awaiting it hung the connection.
        bytes = await readBody(request.clone(), max).catch((e) => {
          // A client that stops sending (the idle timeout closed it) is not our error: no 500 logged.
          throw e instanceof AppError ? e : incomplete();
        });
      }
      const ct = request.headers.get("content-type");
      const json = JSON_TYPE.test(ct ?? "");
      const route = takesBody(request.method, path);
      let problem: AppError | null = null;
      /** Not JSON, to an API path: never parsed (a refusal, or ignored by a route without a body). */
      let unread = false;
      const coding = request.headers.get("content-encoding");
      if (bytes.length && path.startsWith("/api/")) {
        // A route without a body schema ignores a body: routing answers (404, 405, the route).
        // A coded body (gzip, br …) is never inflated here: gzip was refused as "not a JSON
        // object", and any other coding's bytes were read as if uncoded (RFC 9110 §8.4: 415).
        if (coding !== null && !IDENTITY.test(coding)) {
          unread = true;
          if (route !== "none") problem = notDecoded(coding);
        } else if (!API_JSON.test(ct ?? "")) {
          unread = true;
          if (route !== "none") problem = notJson(ct);
        } else {
          // Media types are case-insensitive (RFC 9110 §8.3.1), but the framework's parser knows
          // `application/json` by its lowercase letters: `Application/JSON` left the body unparsed,
          // a 400 "Expected object". Written as it knows it, for every route at once.
          const known = ct!.replace(API_JSON_TYPE, "application/json");
          if (known !== ct) request.headers.set("content-type", known);
          // JSON is UTF-8 whatever charset a client names (RFC 8259 §8.1; the parameter has no
          // meaning for application/json): other bytes were read as U+FFFD and stored so. Checked
          // first: a UTF-16 object after its BOM is not "not an object".
          if (route !== "none" && !isUtf8(bytes)) problem = notUtf8();
          else if (firstSignificant(bytes) !== 0x7b && route !== "none") problem = notAnObject();
        }
      } else if (!bytes.length && route !== "none") problem = missingBody();
      if (!unread) {
        const shape = scanBody(bytes, MAX_BODY_DEPTH, MAX_BODY_TOKENS, json);
        if (shape === "too_deep") throw tooDeep();
        if (shape === "too_many_values") throw tooManyValues();
      }
      if (problem && route !== "authed") throw problem;
      // Malformed JSON for an authenticated route waits for authentication too: checked here,
      // where the bytes are (the framework would refuse it while parsing, before any hook).
      if (!problem && route === "authed" && bytes.length && !unread && !parsesAsJson(bytes))
        problem = malformedBody();
      // A body refused or ignored is not parsed at all: a media type the framework has no parser for.
      // A route without a body schema ignores its body: parsed, malformed JSON sent to one (a
      // DELETE, a cancel) was a 400 parse_error before authentication and the access gate.
      if (problem || unread || (route === "none" && bytes.length))
        request.headers.set("content-type", UNREAD_TYPE);
      requests.set(request, { headers: set.headers, isRun, ip, deferred: problem ?? undefined, route });
      return;
    }
    requests.set(request, { headers: set.headers, isRun, ip });
  });
  const afterGeneral = (p: Principal, request: Request, headers: Record<string, unknown>, general: Pair) => {
    show(headers, generalPolicy, general);
    const st = requests.get(request);
    if (st) st.general = general;
    if (requests.get(request)?.isRun) {
      // Refused at the contract's step 4 (beforeRun), after the org and workflow checks.
      runs.set(p, { headers, key: principalKey(p), userKey: `u:${p.user.id}`, general });
      return;
    }
    const refused = refusal(general, "requests", p);
    if (refused) throw refused;
  };

  return {
    plugin,
    /** The body's refusal kept for after authentication and the access gate (src/http/auth.ts). */
    deferredBodyError: (request: Request): AppError | undefined => requests.get(request)?.deferred,
    /**
     * What the plugin does first for a run start (`path` is one), for the sync-run lane
     * (src/http/threads/lane.ts), which answers without the framework: the address's budget, and
     * the request remembered as a run for afterAuth and beforeRun.
     */
    enterRun(request: Request, path: string, server: Server, headers: Record<string, unknown>) {
      const ip = enterLimited(request, server, path, headers, false);
      requests.set(request, { headers, isRun: true, ip });
    },
    /** authPlugin hook: counts the request against its token's and its user's budgets. */
    afterAuth(
      p: Principal,
      request: Request,
      set: { headers: Record<string, unknown> },
    ): void | Promise<void> {
      if (!enabled) return;
      const general = takeBoth(shared, perToken, principalKey(p), perUser, `u:${p.user.id}`);
      return andThen(general, (g) => afterGeneral(p, request, set.headers, g));
    },
    /** authPlugin hook: a failed attempt costs its client address one unit. */
    onAuthFailure(request: Request): void | Promise<void> {
      if (!enabled) return;
      const st = requests.get(request);
      const ip = st?.ip ?? "unknown";
      if (!shared) {
        const d = perIp.take(ip);
        if (st) show(st.headers, ipPolicy, [d]);
        return;
      }
      return andThen(shared.take([{ policy: perIp.policy, key: `ip:${ip}` }]), ([d]) => {
        if (st) show(st.headers, ipPolicy, [d!]);
        // Shared memory: the entry check read the budget as it is, as in memory (no 429 here).
        if (shared.tat) return;
        // PostgreSQL: the entry check read the TAT this node saw last; a budget spent through other
        // nodes shows here first.
        if (ipTats.size >= 100_000) ipTats.clear(); // bounded: forgetting costs one more round trip
        ipTats.set(ip, d!.tat);
        if (!d!.allowed) throw rateLimited(d!, "failed authentication attempts from this address");
      });
    },
    /**
     * webhookRoutes hook, before a ping or redelivery is queued (after 404 and 409): one unit of
     * the webhook's budget; 429 rate_limited once it is spent. A refused request costs nothing.
     */
    webhookSend(webhookId: number, request: Request, headers: Record<string, unknown>): void | Promise<void> {
      if (!enabled) return;
      const key = `w:${webhookId}`;
      const decided = shared
        ? andThen(shared.take([{ policy: perWebhook.policy, key }]), ([d]) => d!)
        : perWebhook.take(key);
      return andThen(decided, (d) => {
        const general = requests.get(request)?.general;
        if (general) show(headers, webhookPolicy, [...general, d]);
        if (!d.allowed) throw rateLimited(d, "pings and redeliveries for this webhook");
      });
    },
    /** runRoutes hook, the contract's step 4. */
    beforeRun(p: Principal): void | Promise<void> {
      if (!enabled) return;
      const st = runs.get(p);
      const refused = st && refusal(st.general, "requests", p);
      if (refused) throw refused;
      const started = takeBoth(
        shared,
        perTokenRuns,
        st?.key ?? principalKey(p),
        perUserRuns,
        st?.userKey ?? `u:${p.user.id}`,
      );
      return andThen(started, (d) => {
        if (st) show(st.headers, runPolicy, [...st.general, ...d]);
        const over = refusal(d, "runs started", p);
        if (over) throw over;
      });
    },
  };
}
export type Limits = ReturnType<typeof createLimits>;
