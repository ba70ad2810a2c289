// The machine the numbers were measured on, the tools the benchmark needs, and the pinning
// plan: load generator on one core, server on another, so the two do not fight for a CPU.
import { existsSync, readFileSync } from "node:fs";
import { availableParallelism, cpus, release, totalmem } from "node:os";

export interface Machine {
  cpu: string;
  cores: number;
  memGiB: number;
  os: string;
  kernel: string;
  bun: string;
  wrk: string | null;
  /** taskset present and at least two cores: wrk on `loadCore`, the server on `serverCore`. */
  pinned: boolean;
  loadCore: number;
  serverCore: number;
  /** Validation workers of the server under test. */
  workers: number;
}

export const WRK_HINT = "wrk is missing: install it with `sudo apt-get install -y wrk` (Debian/Ubuntu).";

const which = (cmd: string) => Bun.which(cmd);

function osName(): string {
  if (!existsSync("/etc/os-release")) return process.platform;
  const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync("/etc/os-release", "utf8"));
  return m?.[1] ?? process.platform;
}

export function describeMachine(): Machine {
  const cores = availableParallelism();
  const wrkPath = which("wrk");
  let wrk: string | null = null;
  if (wrkPath) {
    // `wrk -v` prints its version line and exits 1.
    const p = Bun.spawnSync([wrkPath, "-v"]);
    wrk =
      `${p.stdout}${p.stderr}`
        .split("\n")[0]
        ?.replace(/ Copyright.*/, "")
        .trim() || "wrk";
  }
  const pinned = cores >= 2 && which("taskset") !== null;
  return {
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    cores,
    memGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: osName(),
    kernel: release(),
    bun: Bun.version,
    wrk,
    pinned,
    loadCore: 0,
    serverCore: pinned ? 1 : 0,
    // The server gets one core, so one worker: a second would only time-share that core.
    workers: 1,
  };
}

export function machineLine(m: Machine): string {
  const pinning = m.pinned
    ? `wrk pinned to core ${m.loadCore}, server (main thread + ${m.workers} worker) pinned to core ${m.serverCore}`
    : "no pinning (--unpinned, taskset missing or a single core): load and servers share the CPUs";
  return `${m.cpu}, ${m.cores} cores, ${m.memGiB} GiB RAM; ${m.os}, Linux ${m.kernel}; Bun ${m.bun}; ${m.wrk ?? "no wrk"}; ${pinning}`;
}
