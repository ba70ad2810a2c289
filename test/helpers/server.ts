// Test harness: a real server per test file — temp data dir (and, on PostgreSQL, a fresh
// database: test/helpers/backend.ts), port 0, real HTTP with fetch.
import { SYSTEM } from "../../src/audit/actor.ts";
import { rmSync } from "node:fs";
import { type Config, testConfig } from "../../src/config.ts";
import { type Param, all } from "../../src/db/program.ts";
import type { Role } from "../../src/orgs/store.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { freshPgDatabase, onPostgres } from "./backend.ts";
import { type Gates, createGates } from "./gates.ts";
import { testTempDir } from "./temp.ts";

export interface TestServer extends RunningServer {
  dataDir: string;
  /** The gates of its `test_hold` validator (helpers/gates.ts): runs held until the test says. */
  gates: Gates;
  /** The PostgreSQL database's URL when the suite runs on PostgreSQL; null on SQLite. */
  databaseUrl: string | null;
  /** The options that point a CLI command at this server's database. */
  cliArgs: string[];
  /** Token of the instance admin "root", who is admin of org "acme". */
  rootToken: string;
  close(): Promise<void>;
  /** Creates a user with a token, optionally a member of org with role. */
  user(
    username: string,
    org?: string,
    role?: Role,
    opts?: { is_admin?: boolean },
  ): Promise<{ id: number; token: string; tokenId: number }>;
  org(slug: string): Promise<number>;
  /** Rows in a table. */
  count(table: string): Promise<number>;
  /** Runs SQL (`?` placeholders) on the server's database, either dialect; all rows. */
  sql<T = Record<string, unknown>>(text: string, ...params: Param[]): Promise<T[]>;
  /** The first row of sql(), or null. */
  row<T = Record<string, unknown>>(text: string, ...params: Param[]): Promise<T | null>;
}

interface Storage {
  dataDir: string;
  databaseUrl: string | null;
  /** Kept across restarts, like the data. */
  gates: Gates;
  drop(): Promise<void>;
}

async function newStorage(): Promise<Storage> {
  const dataDir = testTempDir("assay-test-");
  const gates = createGates();
  if (!onPostgres) return { dataDir, databaseUrl: null, gates, drop: async () => {} };
  const pg = await freshPgDatabase();
  return { dataDir, databaseUrl: pg.url, gates, drop: pg.drop };
}

const base = (storage: Storage, overrides: Partial<Record<keyof Config, unknown>>) => ({
  port: 0,
  // Stable across restartTestServer, as a node name in production is (ASSAY_NODE_ID=%H).
  node_id: "test-node",
  log_level: "silent",
  rate_limit_disabled: true,
  workers: 2,
  test_gates_dir: storage.gates.dir,
  // A run a test expects to finish within the request gets the longest wait: on a busy machine
  // even a trivial run can take seconds. Tests about 202 ask for it (Prefer: wait=N,
  // respond-async) or set their own.
  sync_wait_ms: 60_000,
  // npm test's third pass runs the run and webhook files again with the writer thread on
  // (scripts/test.ts): it is off by default, and its path differs from the main connection's.
  ...(process.env.ASSAY_TEST_WRITER_THREAD ? { writer_thread: process.env.ASSAY_TEST_WRITER_THREAD } : {}),
  ...overrides,
  data_dir: storage.dataDir,
  database_url: storage.databaseUrl,
});

function wrap(server: RunningServer, storage: Storage, rootToken: string): TestServer {
  const d = server.deps;
  const org = async (slug: string) =>
    (await d.orgs.getBySlug(slug))?.id ?? (await d.orgs.create(slug, slug.toUpperCase(), SYSTEM)).id;
  const user: TestServer["user"] = async (username, orgSlug, role, opts) => {
    const u =
      (await d.users.getByUsername(username)) ??
      (await d.users.create({ username, is_admin: opts?.is_admin }, SYSTEM));
    if (orgSlug && role) await d.orgs.addMember(await org(orgSlug), u.id, role, SYSTEM);
    const { token, record } = await d.tokens.create(u.id, `${username}-token`, null, SYSTEM);
    return { id: u.id, token, tokenId: record.id };
  };
  const sql = <T>(text: string, ...params: Param[]) => d.db.exec(all<T>(text, ...params));
  return {
    ...server,
    dataDir: storage.dataDir,
    gates: storage.gates,
    databaseUrl: storage.databaseUrl,
    cliArgs: storage.databaseUrl ? ["--database-url", storage.databaseUrl] : ["--data-dir", storage.dataDir],
    rootToken,
    user,
    org,
    sql,
    row: async <T>(text: string, ...params: Param[]) => (await sql<T>(text, ...params))[0] ?? null,
    count: async (table: string) =>
      Number((await sql<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]?.n ?? 0),
    async close() {
      // Held steps end at once instead of holding the shutdown for its grace period.
      storage.gates.openAll();
      await server.stop();
      await storage.drop();
      storage.gates.remove();
      rmSync(storage.dataDir, { recursive: true, force: true });
    },
  };
}

const storageOf = new WeakMap<TestServer, Storage>();

export async function startTestServer(
  overrides: Partial<Record<keyof Config, unknown>> = {},
): Promise<TestServer> {
  const storage = await newStorage();
  const server = await startServer(testConfig(base(storage, overrides)));
  const t = wrap(server, storage, "");
  const root = await t.user("root", "acme", "admin", { is_admin: true });
  const s = { ...t, rootToken: root.token };
  storageOf.set(s, storage);
  return s;
}

/**
 * Stops `s` and starts a new server on the same data (dir or database), as a restart does: what
 * was committed is there, what was in memory is gone. The root token stays valid; close() removes
 * the data.
 */
export async function restartTestServer(
  s: TestServer,
  overrides: Partial<Record<keyof Config, unknown>> = {},
): Promise<TestServer> {
  await s.stop();
  const storage = storageOf.get(s) ?? {
    dataDir: s.dataDir,
    databaseUrl: s.databaseUrl,
    gates: s.gates,
    drop: async () => {},
  };
  const server = await startServer(testConfig(base(storage, overrides)));
  const t = wrap(server, storage, s.rootToken);
  storageOf.set(t, storage);
  return t;
}

export interface CallOpts {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  raw?: BodyInit;
}

/** fetch against the server; JSON bodies encoded and decoded. */
export async function call(s: { url: string }, method: string, path: string, o: CallOpts = {}) {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let body: BodyInit | undefined = o.raw;
  if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(s.url + path, { method, headers, body });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  // biome-ignore lint/suspicious/noExplicitAny: test convenience
  return { status: res.status, headers: res.headers, json: json as any, text };
}

/** The whole error object, for exact assertions. */
export const errorBody = (
  status: number,
  code: string,
  detail: unknown = expectString(),
  errors: unknown[] = [],
) => ({
  detail,
  code,
  status,
  errors,
});

import { expect } from "bun:test";
const expectString = () => expect.any(String);
/**
 * A server on an instance without any user (the first run: setup form, `assay init`), which
 * startTestServer cannot give: it creates one. `close` stops it and removes its data.
 */
export async function startEmptyServer(): Promise<RunningServer & { close(): Promise<void> }> {
  const dataDir = testTempDir("assay-empty-");
  const pg = onPostgres ? await freshPgDatabase() : null;
  const server = await startServer(
    testConfig({
      data_dir: dataDir,
      database_url: pg?.url ?? null,
      port: 0,
      log_level: "silent",
      rate_limit_disabled: true,
      workers: 1,
    }),
  );
  return Object.assign(server, {
    async close() {
      await server.stop();
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  });
}
