// Settings are read once at start from ASSAY_* environment variables and `serve` flags (a flag
// wins), checked all together — every bad key is reported, not just the first — then frozen.
// The table below is the single source for parsing, `assay serve --help` and README.md's
// configuration table (test/unit/config-docs.test.ts holds that table equal to it).
import { availableParallelism, hostname } from "node:os";
import { parseDatabaseUrl } from "./db/url.ts";
import { databaseUrlProblems, severalHostsProblem } from "./db/url-query.ts";
import { nearest } from "./lib/nearest.ts";
import { maskUrlText } from "./lib/mask-url.ts";
/**
 * idle_in_transaction_session_timeout of Assay's PostgreSQL sessions (docs/postgres.md): far above
 * the idle gaps of Assay's own transactions (statements sent one after another by a program; none
 * waits on a client, a worker or the network between them), short enough that a node paused
 * mid-transaction holds up other nodes' writes for seconds, not for as long as it stays paused.
 */
export const PG_IDLE_IN_TRANSACTION_TIMEOUT_MS = 10000;
/** The environment variable that enables the test-only `test_hold` validator. */
export const TEST_GATES_ENV = "ASSAY_TEST_GATES_DIR";

type Kind = "string" | "int" | "bool";
interface SettingDef {
  key: string;
  kind: Kind;
  def: string | number | boolean | null;
  min?: number;
  max?: number;
  help: string;
}

export const SETTINGS = [
  { key: "host", kind: "string", def: "127.0.0.1", help: "Interface to listen on" },
  { key: "port", kind: "int", def: 8080, min: 0, max: 65535, help: "TCP port (0 = any free port)" },
  { key: "data_dir", kind: "string", def: "./assay-data", help: "Directory holding the SQLite database" },
  {
    key: "database_url",
    kind: "string",
    def: null,
    help: "postgres://… puts all state in PostgreSQL instead of the data dir (docs/postgres.md)",
  },
  {
    key: "node_id",
    kind: "string",
    def: null,
    help: "This server's name among several on one database (default: host name and a random suffix)",
  },
  {
    key: "run_lease_ms",
    kind: "int",
    def: 30000,
    min: 1000,
    max: 3600000,
    help: "How long a node's claim on a running run lasts unless renewed (another node then takes it over)",
  },
  {
    key: "database_pool_size",
    kind: "int",
    def: 20,
    min: 2,
    max: 1000,
    help: "PostgreSQL connections this server may open",
  },
  {
    key: "database_idle_in_transaction_timeout_ms",
    kind: "int",
    def: PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    min: 0,
    max: 86400000,
    help: "PostgreSQL: a transaction of this server's left idle this long is ended by the database, with its row locks (a node paused mid-transaction); 0 = the role's or database's setting",
  },
  {
    key: "base_url",
    kind: "string",
    def: null,
    help: "Public URL for Location/next/previous (default: from the request)",
  },
  {
    key: "tls_cert_file",
    kind: "string",
    def: null,
    help: "Serve HTTPS: the certificate chain, PEM (with --tls-key-file; default: plain HTTP)",
  },
  {
    key: "tls_key_file",
    kind: "string",
    def: null,
    help: "Serve HTTPS: the certificate's private key, PEM, unencrypted",
  },
  {
    key: "sync_wait_ms",
    kind: "int",
    def: 5000,
    min: 0,
    max: 60000,
    help: "How long a run request waits for a 201",
  },
  {
    key: "max_payload_bytes",
    kind: "int",
    def: 26214400,
    min: 1024,
    max: 1073741824,
    help: "Largest request body",
  },
  {
    key: "max_metadata_bytes",
    kind: "int",
    def: 16384,
    min: 2,
    max: 1048576,
    help: "Largest metadata object (JSON text)",
  },
  {
    key: "max_workflows_per_org",
    kind: "int",
    def: 1000,
    min: 1,
    max: 1000000,
    help: "Most live workflows an organization may have (each up to 64 MiB of snapshots)",
  },
  {
    key: "max_schemas_per_org",
    kind: "int",
    def: 2000,
    min: 1,
    max: 1000000,
    help: "Most stored schemas an organization may have (each up to 8 MiB)",
  },
  {
    key: "max_yaml_bytes",
    kind: "int",
    def: 4194304,
    min: 0,
    max: 1073741824,
    help: "Largest YAML document a step parses (0 = no limit): the YAML reader holds ~175 bytes of memory per byte",
  },
  {
    key: "max_schematron_elements",
    kind: "int",
    def: 200000,
    min: 0,
    max: 100000000,
    help: "Most elements a Schematron step reads (0 = no limit): its document model holds ~3.3 KB of memory per element",
  },
  {
    key: "max_body_bytes",
    kind: "int",
    def: 2097152,
    min: 1024,
    max: 1073741824,
    help: "Largest request body outside run submissions (workflow definitions …)",
  },
  {
    key: "idle_timeout_s",
    kind: "int",
    def: 60,
    min: 1,
    max: 255,
    help: "Seconds a connection may idle, or take to send a request body, before it is closed",
  },
  {
    key: "http_threads",
    kind: "int",
    def: 1,
    min: 1,
    max: 64,
    help: "Threads serving HTTP on the port (1 = the main thread alone; docs/scaling.md)",
  },
  {
    key: "writer_thread",
    kind: "string",
    def: "off",
    help: "SQLite: commit sync runs on a thread of their own — off | on | auto (on with more than one core); docs/scaling.md",
  },
  {
    key: "commit_window_us",
    kind: "int",
    def: 0,
    min: 0,
    max: 100000,
    help: "SQLite: least time between two group commits of the main connection, µs (0 = the next turn of the event loop; a window trades latency for fewer, larger commits; docs/scaling.md)",
  },
  { key: "workers", kind: "int", def: 0, min: 0, max: 256, help: "Validation workers (0 = one per core)" },
  {
    key: "inline_jobs",
    kind: "bool",
    def: true,
    help: "Run small JSON documents with linear-time steps on the main thread, not a worker",
  },
  {
    key: "max_queue",
    kind: "int",
    def: 10000,
    min: 1,
    max: 10000000,
    help: "Queued runs (not yet taken by a worker) before new runs get 503",
  },
  {
    key: "max_queue_per_org",
    kind: "int",
    def: 0,
    min: 0,
    max: 10000000,
    help: "Queued runs of one org before its new runs get 503 (0 = half of max_queue)",
  },
  {
    key: "step_timeout_ms",
    kind: "int",
    def: 60000,
    min: 10,
    max: 3600000,
    help: "Default per-step time limit",
  },
  {
    key: "step_timeout_max_ms",
    kind: "int",
    def: 600000,
    min: 10,
    max: 3600000,
    help: "Ceiling for a step's timeout_ms",
  },
  {
    key: "run_timeout_ms",
    kind: "int",
    def: 1800000,
    min: 10,
    max: 86400000,
    help: "Time limit of a run's steps in all, from its first step's start",
  },
  {
    key: "check_timeout_ms",
    kind: "int",
    def: 10000,
    min: 10,
    max: 600000,
    help: "Time limit of a workflow's save-time check, its schemas and expressions compiled (past it: 400 too_complex)",
  },
  {
    key: "memory_limit_mb",
    kind: "int",
    def: 0,
    min: 0,
    max: 16777216,
    help: "Server memory past which the longest-running step is stopped (0 = 80% of the host's or container's memory)",
  },
  // 512: above the Schematron caches the expression bound allows (≤ ~220 MB of heap) plus a 10 MB
  // XML document's libxml2 memory (366 MB, kept), so neither replaces a worker after every job;
  // below what one 25 MB document leaves (~1 GB). docs/benchmarks.md, "Workers replaced for their heap".
  {
    key: "worker_max_heap_mb",
    kind: "int",
    def: 512,
    min: 0,
    max: 16777216,
    help: "Heap a validation worker may keep after a full collection before it is replaced between jobs (0 = no bound)",
  },
  {
    key: "max_attempts",
    kind: "int",
    def: 3,
    min: 1,
    max: 100,
    help: "Executions of a run (restarts included) before it ends in error",
  },
  {
    key: "retention_days",
    kind: "int",
    def: 0,
    min: 0,
    max: 36500,
    help: "Default days before submission content is purged (0 = keep)",
  },
  {
    key: "shutdown_grace_ms",
    kind: "int",
    def: 10000,
    min: 0,
    max: 600000,
    help: "Time running steps get to finish on shutdown",
  },
  {
    key: "rate_limit_disabled",
    kind: "bool",
    def: false,
    help: "Turn rate limiting off (trusted benchmarks only)",
  },
  {
    key: "rate_limit_per_minute",
    kind: "int",
    def: 1200,
    min: 1,
    max: 10000000,
    help: "Requests per token per minute",
  },
  {
    key: "rate_limit_runs_per_minute",
    kind: "int",
    def: 600,
    min: 1,
    max: 10000000,
    help: "Run starts per token per minute",
  },
  {
    key: "rate_limit_user_per_minute",
    kind: "int",
    def: 2400,
    min: 1,
    max: 10000000,
    help: "Requests per user per minute, all their tokens and sessions together",
  },
  {
    key: "rate_limit_user_runs_per_minute",
    kind: "int",
    def: 1200,
    min: 1,
    max: 10000000,
    help: "Run starts per user per minute, all their tokens and sessions together",
  },
  {
    key: "rate_limit_ip_per_minute",
    kind: "int",
    def: 300,
    min: 1,
    max: 10000000,
    help: "Unauthenticated/failed-auth requests per IP per minute",
  },
  {
    key: "rate_limit_webhook_sends_per_minute",
    kind: "int",
    def: 20,
    min: 1,
    max: 10000000,
    help: "Pings and redeliveries per webhook per minute, all its admins together",
  },
  {
    key: "trust_proxy",
    kind: "bool",
    def: false,
    help: "Take the client IP from X-Forwarded-For (only behind your own reverse proxy)",
  },
  {
    key: "webhook_allow_private",
    kind: "bool",
    def: false,
    help: "Allow webhook targets on private/loopback addresses",
  },
  {
    key: "webhook_timeout_ms",
    kind: "int",
    def: 10000,
    min: 100,
    max: 60000,
    help: "Time limit of one webhook delivery attempt",
  },
  {
    key: "webhook_retry_delays_ms",
    kind: "string",
    def: "5000,300000,1800000,7200000,18000000,36000000,36000000",
    help: "Delays before each webhook retry, comma-separated ms",
  },
  {
    key: "webhook_disable_after_failures",
    kind: "int",
    def: 5,
    min: 1,
    max: 10000,
    help: "Consecutive failed webhook deliveries that deactivate an endpoint…",
  },
  {
    key: "webhook_disable_after_days",
    kind: "int",
    def: 3,
    min: 0,
    max: 3650,
    help: "…when they span at least this many days",
  },
  {
    key: "cors_origins",
    kind: "string",
    def: null,
    help: "Origins whose browser apps may call the API (comma-separated; * for any, bearer tokens only)",
  },
  {
    key: "metrics_enabled",
    kind: "bool",
    def: false,
    help: "Serve /metrics without a token (otherwise instance-admin token)",
  },
  { key: "log_level", kind: "string", def: "info", help: "debug | info | warn | error | silent" },
  {
    key: "access_log",
    kind: "bool",
    def: false,
    help: "Log one line per answered request: method, path, status, duration, request id, client",
  },
] as const satisfies readonly SettingDef[];

type Value<D extends SettingDef> = D["kind"] extends "int"
  ? number
  : D["kind"] extends "bool"
    ? boolean
    : D["def"] extends null
      ? string | null
      : string;
export type Config = Readonly<
  { [D in (typeof SETTINGS)[number] as D["key"]]: Value<D> } & {
    /**
     * Test servers only: the directory of the `test_hold` validator's gates
     * (src/validators/test-hold/index.ts). Read from ASSAY_TEST_GATES_DIR alone, never a flag, and
     * absent from `serve --help`: no operator sets it by accident.
     */
    test_gates_dir: string | null;
  }
>;

export const envName = (key: string) => `ASSAY_${key.toUpperCase()}`;
export const flagName = (key: string) => `--${key.replaceAll("_", "-")}`;
const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"];
const WRITER_THREAD = ["auto", "on", "off"];

/** Whether SQLite's sync runs are committed on the writer thread (src/db/writer.ts). */
export function wantsWriterThread(c: { writer_thread: string; database_url: string | null }): boolean {
  if (c.database_url) return false;
  if (c.writer_thread === "auto") return availableParallelism() > 1;
  return c.writer_thread === "on";
}

function parsesAsUrl(url: string): boolean {
  try {
    const u = parseDatabaseUrl(url)?.url;
    if (!u) return false;
    decodeURIComponent(u.username);
    decodeURIComponent(u.password);
    decodeURIComponent(u.pathname);
    return true;
  } catch {
    return false;
  }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  }
}

/** Parse settings from env and `--flag value` / `--flag=value` arguments; throws ConfigError. */
/** ASSAY_* variables read elsewhere: the CI client's (`assay validate`), the typed client check's, tests' and the bench's. */
const OTHER_ENV =
  /^ASSAY_(TOKEN|SERVER|URL|ORG|PG_BIN|QUICKSTART|CHROMIUM|SCREENSHOTS|EN16931_FULL|TEST_[A-Z0-9_]+|BENCH_[A-Z0-9_]+)$/;

/**
 * ASSAY_* variables in `env` that name no setting, each with the setting it most likely meant:
 * a mistyped one (ASSAY_MAX_PAYLOAD) would otherwise be ignored without a word.
 */
export function unknownEnvironment(
  env: Record<string, string | undefined>,
): { name: string; meant: string | null }[] {
  const names = SETTINGS.map((s) => envName(s.key));
  const known = new Set(names);
  return Object.keys(env)
    .filter((n) => n.startsWith("ASSAY_") && !known.has(n) && !OTHER_ENV.test(n))
    .sort()
    .map((name) => ({ name, meant: nearest(name, names) }));
}

export function loadConfig(
  environment: Record<string, string | undefined>,
  flags: Record<string, string> = {},
): Config {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  const known = new Set<string>(SETTINGS.map((s) => s.key));
  for (const f of Object.keys(flags)) if (!known.has(f)) problems.push(`unknown option ${flagName(f)}`);
  // --data-dir names a SQLite data dir; --database-url and ASSAY_DATABASE_URL a PostgreSQL
  // database. An explicit --data-dir with a database URL anywhere is refused rather than resolved
  // either way: ASSAY_DATABASE_URL silently won (a command meant for a staging data dir ran on
  // production's PostgreSQL), and letting the flag win would start a PostgreSQL node's unit that
  // also passes --data-dir on an empty SQLite database instead. Unset the variable (or set it
  // empty) to use a data dir on such a machine.
  if (flags.data_dir !== undefined && flags.database_url !== undefined)
    problems.push("--data-dir and --database-url name two databases: give one of them");
  else if (flags.data_dir !== undefined && (environment[envName("database_url")] ?? "") !== "")
    problems.push(
      "--data-dir names a data dir but ASSAY_DATABASE_URL names a PostgreSQL database: unset one of them",
    );
  const env = environment;
  for (const s of SETTINGS as readonly SettingDef[]) {
    // An empty flag (`--port "$PORT"` with PORT unset) was the default, past the variable too.
    if (flags[s.key] === "") {
      problems.push(`${flagName(s.key)}: no value given (leave the option out for its default)`);
      continue;
    }
    const raw = flags[s.key] ?? env[envName(s.key)];
    const where = flags[s.key] !== undefined ? flagName(s.key) : envName(s.key);
    if (raw === undefined || raw === "") {
      out[s.key] = s.def;
      continue;
    }
    if (s.kind === "int") {
      const n = Number(raw);
      if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n))
        problems.push(`${where}: "${raw}" is not an integer`);
      else if ((s.min !== undefined && n < s.min) || (s.max !== undefined && n > s.max))
        problems.push(`${where}: ${n} is outside ${s.min}..${s.max}`);
      else out[s.key] = n;
    } else if (s.kind === "bool") {
      const v = raw.trim().toLowerCase();
      if (["1", "true", "yes", "on"].includes(v)) out[s.key] = true;
      else if (["0", "false", "no", "off"].includes(v)) out[s.key] = false;
      else problems.push(`${where}: "${raw}" is not true or false`);
    } else out[s.key] = raw;
  }
  // Each problem names the flag or variable it came from, as the integer and boolean ones do.
  const at = (key: string, problem: string) =>
    problems.push(`${flags[key] !== undefined ? flagName(key) : envName(key)}: ${problem}`);
  if (!WRITER_THREAD.includes(out.writer_thread as string))
    at("writer_thread", `writer thread must be one of ${WRITER_THREAD.join(", ")}`);
  // A default above the ceiling was cut down to it without a word: the operator's value never applied.
  if (
    typeof out.step_timeout_ms === "number" &&
    typeof out.step_timeout_max_ms === "number" &&
    out.step_timeout_ms > out.step_timeout_max_ms
  )
    at(
      "step_timeout_ms",
      `${out.step_timeout_ms} is above the ceiling for a step's time limit, ${flags.step_timeout_max_ms !== undefined ? flagName("step_timeout_max_ms") : envName("step_timeout_max_ms")} ${out.step_timeout_max_ms}`,
    );
  if (typeof out.log_level === "string" && !LOG_LEVELS.includes(out.log_level))
    at("log_level", `log level must be one of ${LOG_LEVELS.join(", ")}`);
  if (!/^\d{1,10}(,\d{1,10}){0,49}$/.test(String(out.webhook_retry_delays_ms)))
    at("webhook_retry_delays_ms", "webhook retry delays must be up to 50 comma-separated integers (ms)");
  if (typeof out.base_url === "string") {
    const base = parseBaseUrl(out.base_url);
    if (typeof base === "string") out.base_url = base;
    else at("base_url", base.problem);
  }
  if ((out.tls_cert_file === null) !== (out.tls_key_file === null))
    at(
      out.tls_cert_file === null ? "tls_key_file" : "tls_cert_file",
      `HTTPS needs both a certificate and its key: set ${flags.tls_cert_file !== undefined || flags.tls_key_file !== undefined ? "--tls-cert-file and --tls-key-file" : "ASSAY_TLS_CERT_FILE and ASSAY_TLS_KEY_FILE"}`,
    );
  // An IPv6 address as URLs write it ("[::1]"): Bun listened on it, but every URL built from the
  // host bracketed it again ("http://[[::1]]:8080", in the banner and the log). The bare address.
  if (typeof out.host === "string" && /^\[[^\]]*\]$/.test(out.host)) out.host = out.host.slice(1, -1);
  if (typeof out.node_id === "string" && !/^[A-Za-z0-9._-]{1,64}$/.test(out.node_id))
    at("node_id", "node id must be 1 to 64 letters, digits, dots, dashes or underscores");
  if (typeof out.cors_origins === "string") {
    const bad = corsOriginProblem(out.cors_origins);
    if (bad) at("cors_origins", bad);
  }
  // `--data-dir postgres://…` served an empty SQLite database in a directory `postgres:/…`, and the
  // banner showed the URL's password.
  if (typeof out.data_dir === "string" && /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(out.data_dir))
    at(
      "data_dir",
      `"${maskUrlText(out.data_dir)}" is a URL, not a directory (a PostgreSQL database is given with --database-url or ASSAY_DATABASE_URL)`,
    );
  const severalHosts = typeof out.database_url === "string" ? severalHostsProblem(out.database_url) : null;
  if (typeof out.database_url === "string" && !/^postgres(ql)?:\/\//.test(out.database_url))
    at("database_url", "database URL must start with postgres:// (or be absent for SQLite in the data dir)");
  else if (severalHosts) at("database_url", severalHosts);
  else if (typeof out.database_url === "string" && !parsesAsUrl(out.database_url))
    at(
      "database_url",
      "database URL is not a valid URL (a % in the user or password must be written %25; other special characters percent-encoded)",
    );
  else if (typeof out.database_url === "string") {
    // The client's own refusal came at the first connection, as exit 1 naming no setting, or
    // never: a value it ignores, or an unreachable host waited for 30 s first.
    const parsed = parseDatabaseUrl(out.database_url);
    for (const p of parsed ? databaseUrlProblems(parsed) : []) at("database_url", p);
  }
  if (problems.length) throw new ConfigError(problems);
  out.test_gates_dir = env[TEST_GATES_ENV] || null;
  if (out.workers === 0) out.workers = Math.max(1, availableParallelism());
  if (out.node_id === null) out.node_id = `${hostname()}-${Math.random().toString(36).slice(2, 8)}`;
  return Object.freeze(out) as Config;
}

/**
 * The base URL without its trailing slashes, or what is wrong with it. Public URLs are the base
 * with a path appended (src/http/url.ts): a query or fragment would end up before the path, and
 * a user and password would be copied into every Location, next link and webhook body.
 */
export function parseBaseUrl(raw: string): string | { problem: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { problem: `base URL "${raw}" is not an http(s) URL` };
  }
  // Named without the value: it holds a password.
  if (u.username || u.password)
    return { problem: "base URL must not carry a user name or password (https://host[:port][/path])" };
  if (!/^https?:$/.test(u.protocol)) return { problem: `base URL "${raw}" is not an http(s) URL` };
  // The href, not u.search and u.hash: a bare "?" or "#" leaves both empty.
  if (/[?#]/.test(u.href))
    return {
      problem: `base URL "${raw}" must not have a query (?…) or fragment (#…): paths are appended to it`,
    };
  return u.href.replace(/\/+$/, "");
}

/**
 * What is wrong with a cors_origins value, or null. Each entry is `*` alone or an origin exactly
 * as browsers send it in the Origin header: scheme://host[:port], no path, no trailing slash.
 */
export function corsOriginProblem(value: string): string | null {
  const list = value.split(",").map((o) => o.trim());
  if (list.includes("*") && list.length > 1) return "CORS origins: * allows any origin; list no other";
  for (const o of list) {
    if (o === "*") continue;
    let origin = "";
    try {
      origin = new URL(o).origin;
    } catch {}
    if (origin !== o || !/^https?:/.test(o))
      return `CORS origins: "${o}" is not an origin like https://app.example.com (scheme, host, optional port)`;
  }
  return null;
}

/**
 * How many queued runs one org may hold: the rest of the queue stays for the others, so one
 * org's backlog cannot turn every other org's runs away with 503 (docs/limits.md).
 */
export const queuePerOrg = (c: { max_queue: number; max_queue_per_org: number }) =>
  Math.min(c.max_queue, c.max_queue_per_org || Math.max(1, Math.floor(c.max_queue / 2)));

/** Settings for tests and embedding: defaults plus overrides, no environment. */
export function testConfig(overrides: Partial<Record<keyof Config, unknown>> = {}): Config {
  const base = loadConfig({});
  return Object.freeze({ ...base, ...overrides }) as Config;
}
