// Starting and stopping the processes under test: the compiled Assay binary and the bare
// Bun.serve baseline, each pinned to the server core. Peak memory comes from the kernel
// (VmHWM of /proc/<pid>/status), so the process's own accounting cannot flatter it.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
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
async function announced(
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
export function initDataDir(dataDir: string, org: string, env: Record<string, string> = {}): string {
  const p = Bun.spawnSync([BIN, "init", "--org", org, "--admin", "bench", "--data-dir", dataDir], {
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
      "--data-dir",
      o.dataDir,
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
