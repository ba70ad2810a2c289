// Starting and stopping the processes under test: the compiled Assay binary and the bare
// Bun.serve baseline, each pinned to the server core. Peak memory comes from the kernel
// (VmHWM of /proc/<pid>/status), so the process's own accounting cannot flatter it.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Machine } from "./machine.ts";

/** The binary under test; ASSAY_BENCH_BIN measures another build (an older release, say). */
export const BIN = resolve(process.env.ASSAY_BENCH_BIN ?? "dist/assay");

/** The caller's environment without ASSAY_* settings: every run starts from the defaults. */
const cleanEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ASSAY_")));

export interface Proc {
  pid: number;
  url: string;
  /** Peak resident set size so far, bytes. */
  peakRss(): number;
  stop(): Promise<void>;
}

/** The command prefix that pins a process to `core`, or nothing when pinning is unavailable. */
export const pin = (m: Machine, core: number): string[] => (m.pinned ? ["taskset", "-c", String(core)] : []);

export function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
  return kb ? Number(kb) * 1024 : Number.NaN;
}

/** Reads a child's stdout until `pattern` matches a line; the first group (the URL it listens on). */
export async function announced(
  stdout: ReadableStream<Uint8Array>,
  pattern: RegExp,
  timeoutMs = 60_000,
): Promise<string> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = setTimeout(() => void reader.cancel(), timeoutMs);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done)
        throw new Error(`the process announced no address (it exited or timed out): ${text.slice(0, 300)}`);
      text += decoder.decode(value, { stream: true });
      const m = pattern.exec(text);
      if (m) return m[1]!;
    }
  } finally {
    clearTimeout(deadline);
    reader.releaseLock();
  }
}

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `assay-bench-${label}-`));
}

/** `assay init` on a fresh data dir; returns the admin's token (last line of stdout). */
/** `command`: the binary by default; bench:ab gives each side's own tree (their schemas may differ). */
export function initDataDir(
  dataDir: string,
  org: string,
  env: Record<string, string> = {},
  command: string[] = [BIN],
): string {
  // --data-dir with ASSAY_DATABASE_URL set is refused: given only when the data is in SQLite.
  const where = env.ASSAY_DATABASE_URL ? [] : ["--data-dir", dataDir];
  const p = Bun.spawnSync([...command, "init", "--org", org, "--admin", "bench", ...where], {
    env: { ...cleanEnv(), ASSAY_LOG_LEVEL: "warn", ...env },
  });
  if (p.exitCode !== 0) throw new Error(`assay init failed: ${p.stderr.toString()}`);
  return p.stdout.toString().trim().split("\n").at(-1)!;
}

/** Polls until GET /healthz answers 200; returns the milliseconds since `since`. */
export async function waitHealthy(url: string, since: number, timeoutMs = 60_000): Promise<number> {
  const deadline = since + timeoutMs;
  while (performance.now() < deadline) {
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return performance.now() - since;
    await Bun.sleep(2);
  }
  throw new Error(`${url}/healthz did not answer 200 within ${timeoutMs} ms`);
}

export interface ServeOptions {
  dataDir: string;
  machine: Machine;
  env?: Record<string, string>;
  /** false: the server may use every core (its helper threads are what is measured). */
  pinned?: boolean;
}

/** Starts `assay serve` pinned to the server core; resolves once /healthz answers. */
export async function startAssay(o: ServeOptions): Promise<Proc & { startMs: number }> {
  const started = performance.now();
  // Port 0: the kernel picks a free port and the server prints its URL (no collisions in CI).
  const child = Bun.spawn(
    [
      ...(o.pinned === false ? [] : pin(o.machine, o.machine.serverCore)),
      BIN,
      "serve",
      "--port",
      "0",
      ...(o.env?.ASSAY_DATABASE_URL ? [] : ["--data-dir", o.dataDir]),
    ],
    {
      env: {
        ...cleanEnv(),
        ASSAY_RATE_LIMIT_DISABLED: "true",
        ASSAY_LOG_LEVEL: "warn",
        ASSAY_WORKERS: String(o.machine.workers),
        ...o.env,
      },
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  let url: string;
  let startMs: number;
  try {
    url = await announced(child.stdout, /listening on (http:\/\/\S+)/);
    startMs = await waitHealthy(url, started);
  } catch (e) {
    child.kill("SIGKILL");
    throw e;
  }
  void child.stdout.pipeTo(new WritableStream()); // keep draining: a full pipe would block it
  return {
    pid: child.pid,
    url,
    startMs,
    peakRss: () => peakRss(child.pid),
    async stop() {
      child.kill("SIGTERM");
      const code = await Promise.race([child.exited, Bun.sleep(20_000).then(() => "timeout" as const)]);
      if (code === "timeout") child.kill("SIGKILL");
      await child.exited;
    },
  };
}

/** A script of this directory run by Bun, pinned to the server core; resolves with its URL. */
async function startScript(
  machine: Machine,
  name: string,
  args: string[] = [],
  env?: Record<string, string>,
  pinned = true,
): Promise<Proc> {
  const script = resolve(import.meta.dir, name);
  const prefix = pinned ? pin(machine, machine.serverCore) : [];
  const child = Bun.spawn([...prefix, process.execPath, script, ...args], {
    env: env && { ...cleanEnv(), ...env },
    stdout: "pipe",
    stderr: "inherit",
  });
  const url = await announced(child.stdout, /listening on (http:\/\/\S+)/);
  void child.stdout.pipeTo(new WritableStream());
  return {
    pid: child.pid,
    url,
    peakRss: () => peakRss(child.pid),
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

/** The baseline: a bare Bun.serve answering a fixed 200-byte JSON body, same pinning. */
export async function startBaseline(machine: Machine): Promise<Proc> {
  const p = await startScript(machine, "baseline-server.ts");
  await waitHealthy(p.url, performance.now());
  return p;
}

/**
 * The floor (floor-server.ts): the same sync run's work hand-written on the same stack, on its own
 * data dir, same pinning. Accepts `token` like Assay's admin token.
 */
export const startFloor = (machine: Machine, dataDir: string, token: string): Promise<Proc> =>
  startScript(machine, "floor-server.ts", [dataDir], { FLOOR_TOKEN: token });

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS = (() => {
  const n = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** CPU seconds used so far by every thread of `pid` (utime + stime of /proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may hold spaces.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

/** Which part of the server a thread is, by its name (comm): Bun names its threads. */
function threadGroup(comm: string, pid: number, tid: number): string {
  if (tid === pid) return "main";
  if (comm === "Worker") return "workers";
  if (/^(JIT|Heap|JSC|mi-)/.test(comm)) return "jit+gc";
  return "other";
}

/**
 * CPU seconds so far of `pid`'s live threads, by group: the main thread (HTTP, our code, the
 * SQLite writer), the Bun Workers (validation pool, checkpoint thread), the engine's JIT and
 * collector threads. A thread that ended is no longer counted (none do under steady load).
 */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const g = threadGroup(comm, pid, Number(t));
      out[g] = (out[g] ?? 0) + (Number(f[11]) + Number(f[12])) / TICKS;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

const loadsSqlite = () =>
  Bun.spawnSync(["node", "-e", "require('better-sqlite3')(':memory:').close()"], { stderr: "pipe" })
    .exitCode === 0;

/**
 * better-sqlite3's native binding, compiled here on first use. `npm install` does not run its
 * install script (package.json allowScripts: its prebuilt binaries come from GitHub, out of reach
 * here, and a compile needs python3, make and g++, which a plain install must not require), so the
 * bench runs node-gyp (bundled with npm) in the package's folder once: ~2 min on 2 cores.
 */
function buildSqliteBinding(): string | null {
  const npm = Bun.which("npm");
  const gyp = npm && resolve(dirname(realpathSync(npm)), "../node_modules/node-gyp/bin/node-gyp.js");
  if (!gyp || !existsSync(gyp)) return "node-gyp (bundled with npm) was not found";
  for (const tool of ["python3", "make", "g++"])
    if (!Bun.which(tool))
      return `${tool} is missing to compile better-sqlite3 (apt-get install -y python3 make g++)`;
  process.stderr.write("bench: compiling better-sqlite3 for the Node peer (once, ~2 min)\n");
  const b = Bun.spawnSync(["node", gyp, "rebuild", "--release"], {
    cwd: resolve("node_modules/better-sqlite3"),
    stdout: "ignore",
    stderr: "pipe",
  });
  if (b.exitCode !== 0)
    return `compiling better-sqlite3 failed: ${b.stderr.toString().trim().split("\n").at(-1)}`;
  return loadsSqlite() ? null : "better-sqlite3 was compiled but does not load under this Node";
}

/**
 * Why the Node peer cannot run here, or null when it can (Node and its packages installed).
 * `compile: false` (--quick) does not compile a missing better-sqlite3 binding: the ~2 min it
 * takes on 2 cores was most of the CI's quick bench.
 */
export function peerMissing(compile = true): string | null {
  if (!Bun.which("node")) return "Node.js is not installed";
  for (const p of ["fastify", "ajv", "ajv-formats", "better-sqlite3"])
    if (!existsSync(resolve("node_modules", p, "package.json")))
      return `node_modules/${p} is missing (npm install)`;
  if (loadsSqlite()) return null;
  if (!compile) return "better-sqlite3 is not compiled yet (--quick does not compile it; a full run does)";
  return buildSqliteBinding();
}

/**
 * The Node peer (peer-fastify.mjs): Fastify + Ajv + better-sqlite3, the sync run as a team would
 * write it, on its own data dir, same pinning. Accepts `token` like Assay's admin token.
 */
export async function startPeer(
  machine: Machine,
  dir: string,
  token: string,
  schema: unknown,
): Promise<Proc> {
  const schemaFile = join(dir, "peer-schema.json");
  mkdirSync(dir, { recursive: true });
  writeFileSync(schemaFile, JSON.stringify(schema));
  const script = resolve(import.meta.dir, "peer-fastify.mjs");
  const child = Bun.spawn(
    [...pin(machine, machine.serverCore), "node", script, join(dir, "data"), schemaFile],
    {
      env: { ...cleanEnv(), PEER_TOKEN: token, NODE_ENV: "production" },
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  const url = await announced(child.stdout, /listening on (http:\/\/\S+)/);
  void child.stdout.pipeTo(new WritableStream());
  return {
    pid: child.pid,
    url,
    peakRss: () => peakRss(child.pid),
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

/** The floor of measure 6b (upload-floor.ts): reads bodies as Assay does, nothing else. */
export const startUploadFloor = (machine: Machine, pinned: boolean): Promise<Proc> =>
  startScript(machine, "upload-floor.ts", [], undefined, pinned);

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** An authenticated JSON call to the server under test; throws on an unexpected status. */
export async function api<T>(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  expect = [200, 201],
): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!expect.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}
