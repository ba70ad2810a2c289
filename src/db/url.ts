// A PostgreSQL URL as libpq and Bun's client read it. `postgres://user:pw@/db?host=/run/postgresql`
// (a Unix socket: userinfo and no host) is libpq's form, but WHATWG's URL parser refuses a
// userinfo without a host, so it is parsed with a stand-in host that is never shown.
const STAND_IN = "unix-socket.invalid";

export interface DatabaseUrl {
  url: URL;
  /** No host between `@` and the path: the socket directory is in `?host=` (or the default). */
  hostless: boolean;
}

export function parseDatabaseUrl(raw: string): DatabaseUrl | null {
  try {
    return { url: new URL(raw), hostless: false };
  } catch {}
  const m = /^(postgres(?:ql)?:\/\/[^/?#]*@)([/?#][\s\S]*)?$/i.exec(raw);
  if (!m) return null;
  try {
    return { url: new URL(`${m[1]}${STAND_IN}${m[2] ?? ""}`), hostless: true };
  } catch {
    return null;
  }
}

/** The URL's text again, without the stand-in host. */
export const formatDatabaseUrl = (u: DatabaseUrl) =>
  u.hostless ? u.url.href.replace(`@${STAND_IN}`, "@") : u.url.href;
