// Sign-in for the web app: login, logout, the session's CSRF token, and password change. The app
// then calls the same /api/v1 routes as any client, authenticated by the session cookie.
import { Elysia, t } from "elysia";
import { actorOf, anonymousActor } from "../audit/actor.ts";
import { audit } from "../audit/append.ts";
import type { Deps } from "../deps.ts";
import { ReferenceGone } from "../db/program.ts";
import { invalid, unauthenticated } from "../errors.ts";
import type { authPlugin } from "../http/auth.ts";
import { clientIp } from "../http/client-ip.ts";
import { ipKey } from "../http/ratelimit.ts";
import { describe, header } from "../http/openapi/components.ts";
import { documentedWith, named } from "../http/openapi/named.ts";
import { AUTHED, BOUNDS, Chars, errorResponses } from "../http/schemas.ts";
import { hashPassword, verifyPassword } from "../users/password-hash.ts";
import { MIN_PASSWORD, passwordProblem } from "../users/password-policy.ts";
import { UserOut, presentUser } from "../users/routes.ts";
import { type LoginLimits, DEFAULT_LOGIN_LIMITS, createLoginLimiter } from "./login-limit.ts";
import {
  PasswordChanged,
  SESSION_TTL_MS,
  clearedCookie,
  createSessions,
  isHttps,
  sessionCookie,
} from "./sessions.ts";
import { deleteOtherSessions } from "./store.ts";

const SessionOut = named(
  "Session",
  t.Object({
    user: UserOut,
    csrf_token: t.Nullable(t.String({ description: "Send as X-CSRF-Token on every write" })),
    expires_at: t.Nullable(t.String()),
  }),
);

const BAD_LOGIN = "Invalid username or password.";
const SET_COOKIE = { "Set-Cookie": header("SetCookie") };

export function webAuthRoutes(
  deps: Deps,
  auth: ReturnType<typeof authPlugin>,
  limits: LoginLimits = { ...DEFAULT_LOGIN_LIMITS, disabled: deps.config.rate_limit_disabled },
) {
  const { users, config } = deps;
  const sessions = createSessions(deps.db, users, config.base_url);
  // Several nodes (PostgreSQL) share the windows in the database.
  const limiter = createLoginLimiter(limits, deps.db.dialect === "postgres" ? deps.db : null);
  const detail = { tags: ["Web session"] };
  type Server = { requestIP(r: Request): { address: string } | null } | null;
  // The sign-in budget's address is the client's as ASSAY_TRUST_PROXY says, IPv6 by /64 as the API's
  // limiter keys it: behind a proxy the socket's address is the proxy's, and every user's sign-ins
  // shared one budget (one client could refuse sign-in to everyone).
  const ipOf = (server: Server, r: Request) => ipKey(clientIp(r, server, config.trust_proxy) ?? "unknown");
  /** The address the audit log records (ASSAY_TRUST_PROXY applies). */
  const auditIp = (server: Server, r: Request) => clientIp(r, server, config.trust_proxy);
  /** A refused sign-in is logged on its own: there is no change to share a transaction with. */
  const loginFailed = (ip: string | null, username: string, userId: number | null, reason: string) =>
    deps.db.tx(() =>
      audit(anonymousActor(ip, username), {
        action: "auth.login_failed",
        org_id: null,
        target_type: "user",
        target_id: userId,
        target_name: username,
        context: { reason },
      }),
    );

  return new Elysia()
    .use(auth)
    .post(
      "/api/v1/auth/login/",
      async ({ body, request, server, set }) => {
        await limiter.attempt(ipOf(server, request), body.username);
        const refuse = async (userId: number | null, reason: string) => {
          await loginFailed(auditIp(server, request), body.username, userId, reason);
          return unauthenticated(BAD_LOGIN);
        };
        let started: Awaited<ReturnType<typeof sessions.start>> | null = null;
        let found: Awaited<ReturnType<typeof users.passwordHash>> = null;
        let previous: Awaited<ReturnType<typeof sessions.current>> | undefined;
        // Checked again when the password changed between the check and the session's write
        // (sessions.start): against the new hash, as a sign-in sent after the change would be.
        for (let check = 1; !started; check++) {
          found = await users.passwordHash(body.username);
          const matched = await verifyPassword(found?.hash, body.password);
          if (!matched || !found) {
            const reason = !found ? "unknown_user" : found.hash ? "wrong_password" : "no_password";
            throw await refuse(found?.user.id ?? null, reason);
          }
          // A new secret on every sign-in (no session fixation); the one the browser held ends.
          if (previous === undefined) previous = await sessions.current(request);
          // A hash stored before normalization (of the raw string) is replaced by the NFKC form's.
          const rehash =
            matched === "raw" ? { stored: found.hash!, hash: await hashPassword(body.password) } : undefined;
          started = await sessions
            .start(found.user, auditIp(server, request), previous?.session.id ?? null, rehash, found.hash!)
            .catch(async (e) => {
              // The user deleted since the password was checked: refused as one sent after it.
              if (e instanceof ReferenceGone) throw await refuse(null, "unknown_user");
              // Changed again and again meanwhile: refused rather than checked for ever.
              if (e instanceof PasswordChanged && check >= 3)
                throw await refuse(found!.user.id, "wrong_password");
              if (e instanceof PasswordChanged) return null;
              throw e;
            });
        }
        const { secret, session } = started;
        const secure = isHttps(request, config.base_url);
        set.headers["set-cookie"] = sessionCookie(secret, SESSION_TTL_MS / 1000, secure);
        return { user: presentUser(found!.user), csrf_token: session.csrf, expires_at: session.expires_at };
      },
      {
        body: t.Object(
          {
            username: Chars(200, { minLength: 1, error: "must be a string of 1 to 200 characters" }),
            password: Chars(1024, { minLength: 1, error: "must be a string of 1 to 1024 characters" }),
          },
          { additionalProperties: false },
        ),
        preconditions: "exists",
        response: { 200: SessionOut, ...errorResponses(400, 401, 429, 500) },
        detail: describe({
          ...detail,
          operationId: "login",
          security: [],
          summary: "Sign in with username and password: sets the session cookie, returns the CSRF token",
          responses: { 200: { headers: SET_COOKIE } },
        }),
      },
    )
    .post(
      "/api/v1/auth/logout/",
      async ({ request, server, set }) => {
        const found = await sessions.current(request);
        if (found) {
          sessions.checkCsrf(request, found.session);
          const principal = { user: found.user, token: null, session: { id: found.session.id } };
          await sessions.end(actorOf(principal, auditIp(server, request)), found.session.id);
        }
        set.headers["set-cookie"] = clearedCookie(isHttps(request, config.base_url));
        set.status = 204;
      },
      {
        preconditions: "exists",
        response: { 204: t.Void(), ...errorResponses(403, 500) },
        detail: describe({
          ...detail,
          operationId: "logout",
          // Answers 204 with or without a session: the cookie is optional.
          security: [{ session: [] }, {}],
          summary: "Sign out: ends the session (needs X-CSRF-Token) and clears the cookie",
          responses: { 204: { headers: SET_COOKIE } },
        }),
      },
    )
    .get(
      "/api/v1/auth/session/",
      async ({ principal }) => {
        const s = principal.session ? await sessions.store.get(principal.session.id) : null;
        return {
          user: presentUser(principal.user),
          csrf_token: s?.csrf ?? null,
          expires_at: s?.expires_at ?? null,
        };
      },
      {
        auth: true,
        response: { 200: SessionOut, ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "getSession",
          summary: "The signed-in user and the session's CSRF token (null for a bearer token)",
        },
      },
    )
    .post(
      "/api/v1/users/me/password/",
      async ({ body, principal, actor, request, server, set }) => {
        await limiter.attempt(ipOf(server, request), principal.user.username);
        const incorrect = () =>
          invalid("The current password is incorrect.", [
            { field: "current_password", code: "incorrect", message: "The current password is incorrect." },
          ]);
        const renewal = principal.session ? sessions.renewal(principal.user.id) : null;
        // Checked again when the password changed between the check and the write (another
        // request or node, an administrator's reset): against the new one, as a change sent after
        // it would be. Without it, a change checked against the old password overwrote the reset.
        for (let check = 1; ; check++) {
          const found = await users.passwordHash(principal.user.username);
          // A raw-form hash (made before normalization) matches too: it is replaced below anyway.
          if (!(await verifyPassword(found?.hash, body.current_password))) throw incorrect();
          const problem = passwordProblem(body.new_password, principal.user.username);
          if (problem)
            throw invalid("The new password is not acceptable.", [
              { field: "new_password", code: "invalid", message: problem },
            ]);
          // Every session of this user ends in the same transaction, this browser's too: it gets a
          // new one (new cookie, new CSRF token: GET /auth/session/), so a stolen cookie does not
          // outlive the old password. API tokens are not affected.
          const written = await users.setPassword(
            principal.user.id,
            await hashPassword(body.new_password),
            actor,
            "user.password_change",
            function* () {
              yield* deleteOtherSessions(principal.user.id, null);
              if (renewal) yield* renewal.insert();
            },
            found!.hash!,
          );
          if (written) break;
          // Changed again and again meanwhile: refused rather than checked for ever.
          if (check >= 3) throw incorrect();
        }
        if (renewal)
          set.headers["set-cookie"] = sessionCookie(
            renewal.secret,
            SESSION_TTL_MS / 1000,
            isHttps(request, config.base_url),
          );
        set.status = 204;
      },
      {
        auth: true,
        preconditions: "exists",
        body: t.Object(
          {
            current_password: Chars(1024, { error: "must be a string of at most 1024 characters" }),
            // The handler refuses a short one after checking the current password: documented here.
            new_password: documentedWith(
              Chars(1024, { error: `A password has ${MIN_PASSWORD} to 1024 characters.` }),
              BOUNDS.password,
            ),
          },
          { additionalProperties: false },
        ),
        response: { 204: t.Void(), ...errorResponses(...AUTHED) },
        detail: describe({
          ...detail,
          operationId: "changePassword",
          summary:
            "Change your password; every web session ends, this one is replaced (new cookie; read the new CSRF token from GET /auth/session/)",
          responses: { 204: { headers: SET_COOKIE } },
        }),
      },
    );
}
