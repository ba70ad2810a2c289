// What a PostgreSQL URL asks of Bun's client, checked at start (src/config.ts) so that a value it
// cannot use is exit 2 naming the setting. Bun's client (1.4, parseOptions) reads a few query
// parameters itself, skips some libpq options, and sends every other one to the server as a
// session setting at connect. Unchecked, `?connect_timeout=abc` was ignored without a word (Assay
// set the client's timeout itself), `?max_lifetime=abc` stopped the start with the client's
// "options.max_lifetime must be …", and `?target_session_attrs=read-write` connected to whatever
// answered. docs/postgres.md, "Running it".
import type { DatabaseUrl } from "./url.ts";

/** libpq's sslmode values, as Bun's client takes them. */
const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];
const FLAGS = ["true", "false", "1", "0"];
const SECONDS_MAX = 2147483647;

const oneOf = (values: string[]) => (key: string, v: string) =>
  values.includes(v) ? null : `${key} "${v}" is not one of ${values.join(", ")}`;
const seconds = (key: string, v: string) =>
  /^\d{1,10}$/.test(v) && Number(v) <= SECONDS_MAX
    ? null
    : `${key} "${v}" is not a whole number of seconds (0 to ${SECONDS_MAX})`;

/** Parameters Bun's client reads, and what it takes of each (the key in lower case, as it reads it). */
const READ: Record<string, (key: string, v: string) => string | null> = {
  sslmode: oneOf(SSL_MODES),
  "ssl-mode": oneOf(SSL_MODES),
  ssl_mode: oneOf(SSL_MODES),
  ssl: oneOf([...FLAGS, ...SSL_MODES]),
  tls: oneOf([...FLAGS, ...SSL_MODES]),
  connect_timeout: seconds,
  max_lifetime: seconds,
  prepare: oneOf(FLAGS),
  channel_binding: oneOf(["disable", "prefer", "require"]),
  port: (key, v) =>
    /^\d{1,5}$/.test(v) && Number(v) >= 1 && Number(v) <= 65535
      ? null
      : `${key} "${v}" is not a port (1 to 65535)`,
  host: () => null,
  path: () => null,
  socket: () => null,
  user: () => null,
  password: () => null,
  dbname: () => null,
  sslrootcert: () => null,
  sslcert: () => null,
  sslkey: () => null,
  sslpassword: () => null,
};

/** Read by Bun's client, but Assay sets them itself: the URL's value would not apply. */
const ASSAY_SETS: Record<string, string> = {
  max: "the pool's size is ASSAY_DATABASE_POOL_SIZE (--database-pool-size)",
  idle_timeout: "Assay closes a pool connection idle for 60 s itself",
};

/**
 * libpq options Bun's client does not implement: it skips the first group and would send the rest
 * to the server as session settings (refused there: "unrecognized configuration parameter").
 * Each maps to the values that ask only for what the client does anyway (accepted).
 */
const NOT_IMPLEMENTED: Record<string, string[]> = {
  // Assay writes: a writable server is what it needs anyway (and a standby fails its first write).
  target_session_attrs: ["any", "read-write", "primary"],
  gssencmode: ["disable", "prefer"],
  sslnegotiation: ["postgres"],
  foundrows: [],
  hostaddr: [],
  passfile: [],
  service: [],
  sslcrl: [],
  sslcrldir: [],
  sslsni: [],
  sslcertmode: [],
  sslkeylogfile: [],
  ssl_min_protocol_version: [],
  ssl_max_protocol_version: [],
  min_protocol_version: [],
  max_protocol_version: [],
  require_auth: [],
  requirepeer: [],
  krbsrvname: [],
  gsslib: [],
  gssdelegation: [],
};

/**
 * libpq options the client skips that only tune the connection, or choose among hosts where a URL
 * names one: accepted whatever their value. URLs carried them (keepalives, sslcompression=0 from
 * providers' and poolers' examples) and served before the check; refusing them stopped such a
 * deployment at its upgrade, for a setting whose absence changes nothing Assay relies on.
 */
const SKIPPED_TUNING = new Set([
  "keepalives",
  "keepalives_idle",
  "keepalives_interval",
  "keepalives_count",
  "tcp_user_timeout",
  "sslcompression",
  "fallback_application_name",
  "load_balance_hosts",
]);

/** What is wrong with the URL's query for Bun's client, one line each (empty: nothing). */
export function databaseUrlProblems(parsed: DatabaseUrl): string[] {
  const problems: string[] = [];
  for (const [key, value] of parsed.url.searchParams) {
    const lower = key.toLowerCase();
    const check = READ[lower];
    if (check) {
      // The client reads an empty value as absent (the default), as libpq does; so here and below.
      const bad = value === "" ? null : check(key, value);
      if (bad) problems.push(bad);
    } else if (ASSAY_SETS[lower] && value !== "")
      problems.push(`${key} cannot be set in the URL: ${ASSAY_SETS[lower]}`);
    else if (SKIPPED_TUNING.has(lower)) continue;
    else if (NOT_IMPLEMENTED[lower] && !NOT_IMPLEMENTED[lower].includes(value))
      problems.push(
        `${key} is a libpq option that Bun's PostgreSQL client, which Assay uses, does not implement: remove it from the URL (docs/postgres.md)`,
      );
  }
  const system = systemRootsProblem(parsed.url.searchParams);
  if (system) problems.push(system);
  return problems;
}

/**
 * `sslrootcert=system` is libpq's "the SSL library's trusted roots", with sslmode verify-full by
 * default and any other mode refused. Bun's client (1.4.5) reads it so too: the default CA store
 * (its own roots and the system's), verify-full, whatever sslmode says but verify-ca (measured:
 * sslmode=disable became verify-full, and without TLS the start said "does not offer TLS, which
 * sslmode=disable requires"). A mode that asks for no TLS, or for no host name check, contradicts
 * it: refused, as libpq does. require, prefer and allow ask less than they get and are accepted.
 */
function systemRootsProblem(query: URLSearchParams): string | null {
  let system = false;
  let mode: string | null = null;
  for (const [key, value] of query) {
    const lower = key.toLowerCase();
    if (lower === "sslrootcert") system = value === "system";
    else if (["sslmode", "ssl_mode", "ssl-mode"].includes(lower) && value !== "")
      mode = ["disable", "verify-ca"].includes(value) ? `${key}=${value}` : null;
    else if ((lower === "ssl" || lower === "tls") && value !== "")
      mode = ["false", "0", "disable", "verify-ca"].includes(value.toLowerCase()) ? `${key}=${value}` : null;
  }
  return system && mode
    ? `sslrootcert=system checks the server's certificate against the system's CAs and its host name (sslmode=verify-full, as libpq reads it), which ${mode} does not: leave sslmode out or set it to verify-full (docs/postgres.md)`
    : null;
}

/**
 * libpq's failover list: several hosts in the URL (`postgres://h1,h2:5433/db`, or a port each,
 * `h1:5432,h2:5432`) or in `?host=h1,h2`, tried in turn there. Bun's client (1.4) has no such list:
 * it reads "h1,h2" as one host name, which resolves to nothing (measured: "Failed to connect" even
 * with both hosts up), so a start waited 30 s for it, then said `cannot reach`; the form with ports
 * is no URL to WHATWG's parser and was "not a valid URL". Read from the URL's text for that reason.
 */
export function severalHostsProblem(raw: string): string | null {
  const m = /^postgres(?:ql)?:\/\/([^?#]*)(?:\?([^#]*))?/i.exec(raw);
  if (!m) return null;
  // The host as the URL parser reads it; when it reads none, the text after the userinfo's last
  // `@`: a password pasted raw may hold `/` (and `,`), and up to the first `/` it was named a host
  // list, and printed.
  let authority: string;
  try {
    authority = new URL(raw).host;
  } catch {
    authority = m[1]!.slice(m[1]!.lastIndexOf("@") + 1).split("/")[0]!;
  }
  let listed = authority.includes(",") ? `the URL names several hosts (${authority})` : null;
  for (const [key, value] of new URLSearchParams(m[2] ?? ""))
    if (key.toLowerCase() === "host" && value.includes(",")) listed ??= `${key}=${value} names several hosts`;
  return listed
    ? `${listed}: Bun's PostgreSQL client, which Assay uses, connects to one host: it does not try the hosts in turn as libpq does, but reads the list as a single host name and reaches none of them. Name one host (for failover, one address that follows the primary: a virtual IP, a DNS name or a proxy) (docs/postgres.md)`
    : null;
}

/**
 * Whether the URL names no host, no socket, and PGHOST is unset: libpq reads that as a Unix socket
 * in the directory compiled into it, Bun's client as localhost over TCP. Accepted (a server on the
 * same machine listening on localhost, as Debian's does, served so before the URL check); said when
 * the connection fails (src/db/open.ts), where a socket-only server looked unreachable.
 */
export function namesNoHost(parsed: DatabaseUrl | null, env: Record<string, string | undefined>): boolean {
  if (!parsed || env.PGHOST || !(parsed.hostless || parsed.url.hostname === "")) return false;
  for (const [key, value] of parsed.url.searchParams)
    if (["host", "path", "socket"].includes(key.toLowerCase()) && value !== "") return false;
  return true;
}

/** The URL's connect_timeout in seconds, if it gives one (checked at start by databaseUrlProblems). */
export function connectTimeoutOf(parsed: DatabaseUrl | null): number | null {
  for (const [key, value] of parsed?.url.searchParams ?? [])
    if (key.toLowerCase() === "connect_timeout" && value !== "") return Number(value);
  return null;
}
