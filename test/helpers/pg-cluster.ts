// A throwaway PostgreSQL server for the tests: its own data directory under a temp dir, a free
// port on 127.0.0.1, started once per test process and removed when the process exits. Nothing
// depends on a server that happens to be running. As root, initdb and postgres run as the
// `postgres` user (initdb refuses root); Debian's `postgresql` package provides both.
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:PORT/ — append a database name. */
  baseUrl: string;
  port: number;
  dir: string;
  /** Runs `pg_ctl` with these arguments against the cluster. */
  pgCtl(...args: string[]): void;
  /** Stops the server (fast shutdown), keeping the data: start() brings it back on the same port. */
  halt(): void;
  start(): void;
  /** Stops the server and removes the cluster. */
  stop(): void;
}

/** The directory holding initdb/postgres/pg_ctl, or null when PostgreSQL is not installed. */
export function pgBinDir(): string | null {
  const fromEnv = process.env.ASSAY_PG_BIN;
  if (fromEnv && existsSync(join(fromEnv, "initdb"))) return fromEnv;
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length) return join(root, versions[0]!, "bin");
  }
  for (const d of (process.env.PATH ?? "").split(":"))
    if (d && existsSync(join(d, "initdb")) && existsSync(join(d, "pg_ctl"))) return d;
  return null;
}

/** A port nothing listens on right now (the kernel's pick for port 0). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

const isRoot = () => process.getuid?.() === 0;

function asPostgres(cmd: string[]): string[] {
  return isRoot() ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd;
}

function check(
  r: { exitCode: number | null; stderr: Uint8Array | Buffer; stdout?: Uint8Array | Buffer },
  what: string,
) {
  if (r.exitCode !== 0)
    throw new Error(`${what} failed (${r.exitCode}): ${new TextDecoder().decode(r.stderr)}`);
}

/** Starts a new cluster; `fsync` off unless asked (tests need no durability across a power loss). */
export async function startPgCluster(opts: { fsync?: boolean } = {}): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) throw new Error("PostgreSQL is not installed (apt-get install -y postgresql)");
  const dir = mkdtempSync(join(tmpdir(), "assay-pg-"));
  const data = join(dir, "data");
  if (isRoot()) {
    const pw = Bun.spawnSync(["id", "-u", "postgres"]);
    const gid = Bun.spawnSync(["id", "-g", "postgres"]);
    check(pw, "id -u postgres (is the postgresql package installed?)");
    chownSync(dir, Number(pw.stdout.toString().trim()), Number(gid.stdout.toString().trim()));
    chmodSync(dir, 0o700);
  }
  check(
    Bun.spawnSync(
      asPostgres([
        join(bin, "initdb"),
        "-D",
        data,
        "-U",
        "postgres",
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--no-sync",
      ]),
      { stdout: "ignore" },
    ),
    "initdb",
  );
  const port = await freePort();
  const settings = [
    `-c port=${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    `-c fsync=${opts.fsync ? "on" : "off"}`,
    "-c max_connections=300",
    "-c shared_buffers=64MB",
  ].join(" ");
  const pgCtl = (...args: string[]) =>
    check(
      Bun.spawnSync(asPostgres([join(bin, "pg_ctl"), "-D", data, "-w", "-t", "60", ...args]), {
        stdout: "ignore",
      }),
      `pg_ctl ${args[0]}`,
    );
  const start = () => pgCtl("start", "-o", settings, "-l", join(dir, "log"));
  start();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    Bun.spawnSync(asPostgres([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop"]), {
      stdout: "ignore",
      stderr: "ignore",
    });
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    baseUrl: `postgres://postgres@127.0.0.1:${port}/`,
    port,
    dir,
    pgCtl,
    halt: () => pgCtl("stop", "-m", "fast"),
    start,
    stop,
  };
}

let shared: Promise<PgCluster> | null = null;
let started: PgCluster | null = null;

/**
 * Stops the shared cluster, if this process started one. `bun test` fires no process "exit"
 * event, so test/helpers/cleanup.ts (a preload) calls this after the last test file.
 */
export function stopSharedPgCluster(): void {
  started?.stop();
}

/** The test process's one cluster, started on first use and stopped after the last test. */
export function sharedPgCluster(): Promise<PgCluster> {
  shared ??= startPgCluster().then((c) => {
    started = c;
    process.once("exit", () => c.stop());
    for (const sig of ["SIGINT", "SIGTERM"] as const)
      process.once(sig, () => {
        c.stop();
        process.exit(130);
      });
    return c;
  });
  return shared;
}
