// The allocator's purge delay for `assay serve` (issue #26; docs/benchmarks.md, eleventh pass).
// Bun allocates through mimalloc, whose scavenger thread returns freed memory to the kernel once
// MIMALLOC_PURGE_DELAY ms (Bun's default: 100) have passed. A busy server frees the young
// generation's blocks at every collection, about 5 times a second, so the same pages went back to
// the kernel and were faulted in again (by JSC's warm-up thread and the main thread) all the time.
// Measured with two servers on one core, wrk alternating: a sync run cost 12 % less CPU with
// purging off than with Bun's 100 ms, and 12–16 % less than with 1 s or 10 s (any positive delay
// purges everything freed when it expires, busy or not). So purging is off: the server keeps the
// memory it has used (its peak stays its peak, and is reused), as a JVM or most C allocators do.
//
// mimalloc reads its options once, when the process starts, so the only way to set one for the
// binary itself is to start again with it: the process replaces itself (execve: same PID, same
// arguments, same environment plus the variable), before anything is loaded or opened. An
// operator's own MIMALLOC_PURGE_DELAY, whatever its value, is kept as it is: that is the way back
// to returning memory (MIMALLOC_PURGE_DELAY=100). Linux only (it reads /proc/self); elsewhere, or
// if anything here fails, the server runs as it was started.
import { FFIType, dlopen, ptr } from "bun:ffi";
import { readFileSync, readlinkSync } from "node:fs";

/** mimalloc's purge delay for the server: never return freed pages (see above). */
export const PURGE_DELAY_MS = -1;
const VARIABLE = "MIMALLOC_PURGE_DELAY";

/** Restarts this process under the tuned allocator, or returns (already tuned, or not possible). */
export function tuneAllocator(env: NodeJS.ProcessEnv = process.env): void {
  if (process.platform !== "linux" || env[VARIABLE] !== undefined) return;
  try {
    // The arguments and environment the process was started with, exactly (not as Bun parsed them).
    const argv = nulSeparated(readFileSync("/proc/self/cmdline"));
    const environ = nulSeparated(readFileSync("/proc/self/environ"));
    // The executable by its own path, not /proc/self/exe: the kernel names the process after the
    // file it runs (ps, top and pgrep would show "exe"). Replaced on disk meanwhile: run untuned.
    const exe = readlinkSync("/proc/self/exe");
    if (!argv.length || exe.endsWith(" (deleted)")) return;
    execve(exe, argv, [...environ, `${VARIABLE}=${PURGE_DELAY_MS}`]);
  } catch {
    // No /proc, no glibc (musl builds), no FFI: run untuned.
  }
}

export function nulSeparated(b: Buffer): string[] {
  const parts = b.toString("utf8").split("\0");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}

/** Returns only if the call failed. */
function execve(path: string, argv: string[], envp: string[]): void {
  const libc = dlopen("libc.so.6", {
    execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  });
  // NUL-terminated strings and NULL-terminated pointer arrays; `keep` holds them until the call.
  const keep: Buffer[] = [];
  const cString = (s: string) => {
    const b = Buffer.from(`${s}\0`, "utf8");
    keep.push(b);
    return ptr(b);
  };
  const array = (xs: string[]) => {
    const a = new BigUint64Array(xs.length + 1);
    xs.forEach((x, i) => {
      a[i] = BigInt(cString(x));
    });
    return a;
  };
  const a = array(argv);
  const e = array(envp);
  libc.symbols.execve(cString(path), ptr(a), ptr(e));
  libc.close();
}
