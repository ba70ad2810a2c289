// The one way the app talks to the server: the same /api/v1 JSON API as every client,
// authenticated by the session cookie, with the session's CSRF token on every write.

export interface ErrorItem {
  field: string;
  code: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly errors: ErrorItem[] = [],
    readonly retryAfter: number | null = null,
  ) {
    super(detail);
  }
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

let csrf: string | null = null;
let onSignedOut: () => void = () => {};
let onStaleCsrf: () => Promise<boolean> = async () => false;

export const setCsrf = (token: string | null) => {
  csrf = token;
};
/** Called when the server answers 401: the session ended (expired, signed out elsewhere). */
export const whenSignedOut = (fn: () => void) => {
  onSignedOut = fn;
};

let onForbidden: () => Promise<void> = async () => {};
let forbidding = false;
/**
 * Called when the server refuses a request for the user's roles (403 other than CSRF): a role
 * lowered or a membership ended since the app read them, so it reads them again and the next
 * page offers only what the user may now do.
 */
export const whenForbidden = (fn: () => Promise<void>) => {
  onForbidden = fn;
};

/**
 * Called when a write is refused because this tab's CSRF token is not its session's (another tab
 * signed in again or changed the password, which makes a new session): reads the session again
 * and says whether the write may be sent again with its token — only when it is still the same
 * user's, so that a tab never acts as a user someone else signed in as meanwhile.
 */
export const whenCsrfStale = (fn: () => Promise<boolean>) => {
  onStaleCsrf = fn;
};

export interface RequestOpts {
  body?: unknown;
  raw?: BodyInit;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Do not treat a 401 as the end of the session (the sign-in form itself). */
  quiet401?: boolean;
  /** Set on the one retry after a stale CSRF token. */
  retried?: boolean;
}

/** A raw fetch with the CSRF header; throws ApiError for any non-2xx answer. */
export async function request(method: string, path: string, o: RequestOpts = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: "application/json", ...o.headers };
  if (method !== "GET" && method !== "HEAD" && csrf) headers["x-csrf-token"] = csrf;
  let body = o.raw;
  if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers["content-type"] = "application/json";
  }
  const url = path.startsWith("/") ? path : `/api/v1/${path}`;
  const res = await fetch(url, { method, headers, body, signal: o.signal, credentials: "same-origin" });
  if (res.ok) return res;
  let e: { detail?: string; code?: string; errors?: ErrorItem[] } = {};
  try {
    e = await res.json();
  } catch {
    // not our error object (a proxy's page): fall back to the status line
  }
  const retry = Number(res.headers.get("retry-after"));
  const err = new ApiError(
    res.status,
    e.code ?? "http_error",
    e.detail ?? `The server answered ${res.status} ${res.statusText}.`,
    Array.isArray(e.errors) ? e.errors : [],
    Number.isFinite(retry) && retry > 0 ? retry : null,
  );
  if (res.status === 401 && !o.quiet401) onSignedOut();
  // The server checks CSRF before anything else, so a refused write changed nothing: sending it
  // again with the session's current token is safe.
  if (
    res.status === 403 &&
    headers["x-csrf-token"] &&
    !o.retried &&
    err.message.startsWith("CSRF check failed")
  )
    if (await onStaleCsrf()) return request(method, path, { ...o, retried: true });
  // Refused for the user's roles: read them again, but not from within that read itself (were it
  // refused too, it would ask again without end).
  if (res.status === 403 && !forbidding && !err.message.startsWith("CSRF check failed")) {
    forbidding = true;
    await onForbidden()
      .catch(() => {})
      .finally(() => {
        forbidding = false;
      });
  }
  throw err;
}

/** JSON in, JSON out; undefined for 204. */
export async function api<T = unknown>(method: string, path: string, o: RequestOpts = {}): Promise<T> {
  const res = await request(method, path, o);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const get = <T>(path: string, signal?: AbortSignal) => api<T>("GET", path, { signal });

/** Query string from an object, skipping empty values. */
export function qs(params: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== null && v !== undefined && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

export const enc = encodeURIComponent;
