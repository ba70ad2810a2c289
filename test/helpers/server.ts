// Test harness: a real server per test file — temp data dir, port 0, real HTTP with fetch.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Config, testConfig } from "../../src/config.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import type { Role } from "../../src/orgs/store.ts";
import { type Gates, createGates } from "./gates.ts";

export interface TestServer extends RunningServer {
  dataDir: string;
  /** The gates of its `test_hold` validator (helpers/gates.ts): runs held until the test says. */
  gates: Gates;
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
  count(table: string): number;
}

export async function startTestServer(
  overrides: Partial<Record<keyof Config, unknown>> = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "assay-test-"));
  const gates = createGates();
  const server = await startServer(
    testConfig({
      test_gates_dir: gates.dir,
      data_dir: dataDir,
      port: 0,
      log_level: "silent",
      rate_limit_disabled: true,
      workers: 2,
      // A run a test expects to finish within the request gets the longest wait: on a busy
      // machine even a trivial run can take seconds. Tests about 202 ask for it (Prefer: wait=N,
      // respond-async) or set their own.
      sync_wait_ms: 60_000,
      ...overrides,
    }),
  );
  const d = server.deps;
  const org = async (slug: string) => {
    const existing = await d.orgs.getBySlug(slug);
    return existing ? existing.id : (await d.orgs.create(slug, slug.toUpperCase())).id;
  };
  const user: TestServer["user"] = async (username, orgSlug, role, opts) => {
    const u =
      (await d.users.getByUsername(username)) ??
      (await d.users.create({ username, is_admin: opts?.is_admin }));
    if (orgSlug && role) await d.orgs.addMember(await org(orgSlug), u.id, role);
    const { token, record } = await d.tokens.create(u.id, `${username}-token`, null);
    return { id: u.id, token, tokenId: record.id };
  };
  const root = await user("root", "acme", "admin", { is_admin: true });
  return {
    ...server,
    dataDir,
    gates,
    rootToken: root.token,
    user,
    org,
    count: (table: string) => (d.db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n,
    async close() {
      // Held steps end at once instead of holding the shutdown for its grace period.
      gates.openAll();
      await server.stop();
      gates.remove();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Stops `s` and starts a new server on the same data dir, as a restart does: what was committed
 * is there, what was in memory is gone. The root token stays valid; close() removes the dir.
 */
export async function restartTestServer(
  s: TestServer,
  overrides: Partial<Record<keyof Config, unknown>> = {},
): Promise<TestServer> {
  await s.stop();
  const server = await startServer(
    testConfig({
      test_gates_dir: s.gates.dir,
      port: 0,
      log_level: "silent",
      rate_limit_disabled: true,
      workers: 2,
      sync_wait_ms: 60_000,
      ...overrides,
      data_dir: s.dataDir,
    }),
  );
  const d = server.deps;
  const org = async (slug: string) =>
    (await d.orgs.getBySlug(slug))?.id ?? (await d.orgs.create(slug, slug.toUpperCase())).id;
  return {
    ...server,
    dataDir: s.dataDir,
    gates: s.gates,
    rootToken: s.rootToken,
    org,
    async user(username, orgSlug, role, opts) {
      const u =
        (await d.users.getByUsername(username)) ??
        (await d.users.create({ username, is_admin: opts?.is_admin }));
      if (orgSlug && role) await d.orgs.addMember(await org(orgSlug), u.id, role);
      const { token, record } = await d.tokens.create(u.id, `${username}-token`, null);
      return { id: u.id, token, tokenId: record.id };
    },
    count: (table: string) => (d.db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n,
    async close() {
      s.gates.openAll();
      await server.stop();
      s.gates.remove();
      rmSync(s.dataDir, { recursive: true, force: true });
    },
  };
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
