// Web sessions: a random secret in an HttpOnly cookie, its SHA-256 digest in web_sessions, and a
// per-session CSRF token the single-page app sends back in X-CSRF-Token on every write.
// Lifetime is fixed (12 h from sign-in, a working day): no write per request to slide it.
// A digest lookup by equality leaks nothing useful through timing: an attacker cannot steer the
// digest of a guess towards a stored one.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { actorOf } from "../audit/actor.ts";
import { audit } from "../audit/append.ts";
import type { Actor } from "../audit/types.ts";
import { type Db, type Program, forUpdate, get } from "../db/program.ts";
import { forbidden } from "../errors.ts";
import type { Principal, SessionAuth } from "../http/auth.ts";
import { type User, type UserStore, rehashPassword } from "../users/store.ts";
import { type SessionRow, createSessionStore, deleteSession, insertSession } from "./store.ts";

export const SESSION_COOKIE = "assay_session";
/**
 * The cookie's name over HTTPS. `__Host-` (RFC 6265bis §4.1.3.2) makes the browser refuse it unless
 * it is Secure, set by a secure origin, Path=/ and without Domain: a sibling subdomain, or a
 * network attacker answering plain HTTP for this host, cannot plant one (a plain-named cookie is
 * shared across ports, schemes and, with Domain, subdomains).
 */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
export const sessionCookieName = (secure: boolean) => (secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE);
export const SESSION_TTL_MS = 12 * 3600 * 1000;
export const CSRF_HEADER = "x-csrf-token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const digestOf = (secret: string) => createHash("sha256").update(secret).digest();

/**
 * The session secret from a Cookie header (RFC 6265 §5.4: pairs separated by "; "), under the one
 * name the request's scheme sets. Over HTTPS a plain-named cookie is not read: anyone who can
 * plant one (above) would sign the browser into their session (fixation); a session started
 * before the prefix existed ends there, and its user signs in again.
 */
export function sessionSecret(cookieHeader: string | null, secure: boolean): string | null {
  if (!cookieHeader) return null;
  const name = sessionCookieName(secure);
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const v = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{43}$/.test(v) ? v : null;
    }
  }
  return null;
}

/** Secure when the browser reached us over HTTPS: directly, through a proxy, or per ASSAY_BASE_URL. */
export function isHttps(request: Request, baseUrl: string | null): boolean {
  return (
    new URL(request.url).protocol === "https:" ||
    request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https" ||
    (baseUrl ?? "").startsWith("https:")
  );
}

export function sessionCookie(value: string, maxAgeS: number, secure: boolean): string {
  return `${sessionCookieName(secure)}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeS}${secure ? "; Secure" : ""}`;
}

export const clearedCookie = (secure: boolean) => sessionCookie("", 0, secure);

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The password a sign-in checked is no longer the user's: checked again against the new one. */
export class PasswordChanged extends Error {
  override name = "PasswordChanged";
}

/** `baseUrl`: ASSAY_BASE_URL, which makes every request HTTPS as isHttps says. */
export function createSessions(db: Db, users: UserStore, baseUrl: string | null) {
  const forShare = db.dialect === "postgres" ? " FOR SHARE" : "";
  const store = createSessionStore(db);

  /** The live session named by the request's cookie and its user, without the CSRF check. */
  async function current(request: Request): Promise<{ session: SessionRow; user: User } | null> {
    const secret = sessionSecret(request.headers.get("cookie"), isHttps(request, baseUrl));
    if (!secret) return null;
    const session = await store.findByDigest(digestOf(secret));
    if (!session || Date.parse(session.expires_at) <= Date.now()) return null;
    const user = await users.get(session.user_id);
    return user ? { session, user } : null;
  }

  /** Writes authenticated by a cookie must prove they come from our page (the CSRF header). */
  function checkCsrf(request: Request, session: SessionRow): void {
    if (SAFE_METHODS.has(request.method)) return;
    const sent = request.headers.get(CSRF_HEADER);
    if (!sent)
      throw forbidden(
        "CSRF check failed: a request authenticated by the session cookie must send the X-CSRF-Token header (from GET /api/v1/auth/session/).",
      );
    if (!sameToken(sent, session.csrf))
      throw forbidden("CSRF check failed: the X-CSRF-Token header does not match this session.");
  }

  const authenticate: SessionAuth = async (request) => {
    const found = await current(request);
    if (!found) return null;
    checkCsrf(request, found.session);
    const principal: Principal = { user: found.user, token: null, session: { id: found.session.id } };
    return principal;
  };

  return {
    store,
    current,
    checkCsrf,
    authenticate,
    /**
     * A new session for a signed-in user (the one the browser held, `replacing`, ends) and its
     * audit entry, in one transaction. The secret goes in the cookie and nowhere else. `rehash`:
     * the password matched a hash of its raw form, replaced in the same transaction by `hash`
     * (its NFKC form's), and the entry says so (`password_rehashed`). `verified`: the hash a
     * sign-in checked the password against; PasswordChanged when the user's is another one now.
     */
    async start(
      user: User,
      ip: string | null,
      replacing: number | null,
      rehash?: { stored: string; hash: string },
      verified?: string,
    ): Promise<{ secret: string; session: SessionRow }> {
      await store.purgeExpired();
      const secret = randomBytes(32).toString("base64url");
      const fresh = {
        user_id: user.id,
        digest: digestOf(secret),
        csrf: randomBytes(32).toString("base64url"),
        expires_at: new Date(Date.now() + SESSION_TTL_MS).toISOString(),
      };
      const session = await db.tx(function* () {
        // First, before any other row is taken: the password checked is still the user's, and
        // (PostgreSQL) a change waits for this session, then ends it with the others. Checked
        // before this transaction only, a password changed through another node (or request)
        // between the check and this insert left a session signed in with the old password
        // alive after "every web session ends" (2026-11-29, test/nodes-races.test.ts).
        if (verified !== undefined) {
          // FOR UPDATE when it rehashes below: two sign-ins that both held the row shared and then
          // wrote it would deadlock.
          const now = yield* get<{ password_hash: string | null }>(
            `SELECT password_hash FROM users WHERE id = ?${rehash ? forUpdate(db.dialect) : forShare}`,
            user.id,
          );
          // A user deleted meanwhile: the insert below fails on its foreign key (ReferenceGone).
          if (now && now.password_hash !== verified) throw new PasswordChanged();
        }
        if (replacing !== null) yield* deleteSession(replacing);
        const row = yield* insertSession(fresh);
        const rehashed = rehash ? yield* rehashPassword(user.id, rehash.stored, rehash.hash) : false;
        const actor = actorOf({ user, token: null, session: { id: row.id } }, ip);
        yield* audit(actor, {
          action: "auth.login",
          org_id: null,
          target_type: "user",
          target_id: user.id,
          target_name: user.username,
          after: {
            session_id: row.id,
            expires_at: row.expires_at,
            ...(rehashed ? { password_rehashed: true } : {}),
          },
        });
        return row;
      });
      return { secret, session };
    },
    /**
     * A session to replace the browser's after a password change (OWASP: a new session id after
     * a privilege change): the program inserts it, to be run in the change's transaction; the
     * secret goes in the cookie. A stolen cookie dies with the old password.
     */
    renewal(userId: number): { secret: string; insert: () => Program<SessionRow> } {
      const secret = randomBytes(32).toString("base64url");
      const fresh = {
        user_id: userId,
        digest: digestOf(secret),
        csrf: randomBytes(32).toString("base64url"),
        expires_at: new Date(Date.now() + SESSION_TTL_MS).toISOString(),
      };
      return { secret, insert: () => insertSession(fresh) };
    },
    /** Ends a session (sign-out), logged as the session's own user. */
    async end(actor: Actor, sessionId: number): Promise<void> {
      await db.tx(function* () {
        if ((yield* deleteSession(sessionId)) === 0) return;
        yield* audit(actor, {
          action: "auth.logout",
          org_id: null,
          target_type: "user",
          target_id: actor.user_id,
          target_name: actor.username,
          before: { session_id: sessionId },
        });
      });
    },
  };
}
export type Sessions = ReturnType<typeof createSessions>;

/** The SessionAuth for createApp (AppOptions.sessions). */
export const createSessionAuth = (db: Db, users: UserStore, baseUrl: string | null): SessionAuth =>
  createSessions(db, users, baseUrl).authenticate;
