// Who is signed in, their orgs and roles. What a page offers follows these roles; the server
// checks them again on every request, so hiding a button is courtesy, not security.
import { ApiError, api, get, setCsrf, whenCsrfStale, whenForbidden } from "./api.ts";
import { type Me, ROLES, type Role } from "./types.ts";

export interface SessionState {
  me: Me;
  expiresAt: string | null;
}

let state: SessionState | null = null;

export const session = () => state;
export const me = (): Me => {
  if (!state) throw new Error("not signed in");
  return state.me;
};

/** Reads the session behind the cookie; null when signed out. `signal` gives up on the reads. */
export async function loadSession(signal?: AbortSignal): Promise<SessionState | null> {
  try {
    const s = await api<{ csrf_token: string | null; expires_at: string | null }>("GET", "auth/session/", {
      quiet401: true,
      signal,
    });
    setCsrf(s.csrf_token);
    const m = await get<Me>("users/me/", signal);
    state = { me: m, expiresAt: s.expires_at };
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 401) throw e;
    state = null;
  }
  return state;
}

// Another tab's sign-in or password change replaced this tab's session: take the new session's
// CSRF token when it is still this user's; otherwise leave the write refused.
whenCsrfStale(async () => {
  if (!state) return false;
  try {
    const s = await api<{ csrf_token: string | null }>("GET", "auth/session/", { quiet401: true });
    const m = await get<Me>("users/me/");
    if (m.username !== state.me.username || !s.csrf_token) return false;
    setCsrf(s.csrf_token);
    return true;
  } catch {
    return false;
  }
});

/** Refreshes orgs and roles (after a membership change) without a new sign-in. */
export async function refreshMe(): Promise<void> {
  if (state) state.me = await get<Me>("users/me/");
}

// A refusal for the user's roles: they changed since they were read (see whenForbidden).
whenForbidden(refreshMe);

export async function signIn(username: string, password: string): Promise<void> {
  const s = await api<{ csrf_token: string; expires_at: string }>("POST", "auth/login/", {
    body: { username, password },
    quiet401: true,
  });
  setCsrf(s.csrf_token);
  state = { me: await get<Me>("users/me/"), expiresAt: s.expires_at };
}

/** The localStorage key a sign-out writes: the app's other tabs hear it (a `storage` event). */
export const SIGNED_OUT_KEY = "assay.signed-out";

export async function signOut(): Promise<void> {
  try {
    await api("POST", "auth/logout/", { quiet401: true });
  } finally {
    state = null;
    setCsrf(null);
    try {
      localStorage.setItem(SIGNED_OUT_KEY, String(Date.now()));
    } catch {
      // storage refused (a private mode's quota): the other tabs learn it at their next request
    }
  }
}

export const forget = () => {
  state = null;
  setCsrf(null);
};

export function roleIn(org: string): Role | null {
  return state?.me.orgs.find((o) => o.org_slug === org)?.role ?? null;
}

/** True when the signed-in user has at least `min` in the org. */
export function can(org: string, min: Role): boolean {
  const r = roleIn(org);
  return r !== null && ROLES.indexOf(r) >= ROLES.indexOf(min);
}

const LAST_ORG = "assay.org";
export function defaultOrg(): string | null {
  const orgs = state?.me.orgs ?? [];
  const last = localStorage.getItem(LAST_ORG);
  return orgs.find((o) => o.org_slug === last)?.org_slug ?? orgs[0]?.org_slug ?? null;
}
export const rememberOrg = (org: string) => localStorage.setItem(LAST_ORG, org);
