// The allocator's setting for `assay serve` (issue #26; docs/benchmarks.md, eleventh pass). Bun
// allocates through its fork of mimalloc, which, each time the event loop parks, discards the free
// blocks inside pages still in use ("hole purging": madvise on every free OS page of them). A busy
// server parks between bursts of requests, and its next requests
// reuse those blocks at once: each reuse is a page fault, and JSC's warm-up thread pre-faults heap
// blocks to keep up. Measured with two servers on one core and wrk alternating, a sync run cost
// 17 % less CPU with MIMALLOC_PURGE_HOLES=0 (p99 10.9 → 8.8 ms). Whole free pages still go back to
// the kernel after Bun's 100 ms purge delay, so memory is still returned: the bench's 10 MiB
// documents peak 5–10 MiB higher than with hole purging. (Turning all purging off instead,
// MIMALLOC_PURGE_DELAY=-1, saved as much CPU but kept 30–40 MiB more after four such documents.)
//
// mimalloc reads its options once, when the process starts, so the only way to set one for the
// binary itself is to start again with it: the process replaces itself (execve: same PID, same
// arguments, same environment plus the variable), before anything is loaded or opened. An
// operator's own MIMALLOC_PURGE_HOLES, whatever its value, is kept as it is: that is the way back
// to Bun's behaviour (MIMALLOC_PURGE_HOLES=1). Linux only (it reads /proc/self); elsewhere, or if
// anything here fails, the server runs as it was started.
import { FFIType, dlopen, ptr } from "bun:ffi";
import { readFileSync, readlinkSync } from "node:fs";

/** The variable `serve` sets, and its value: no hole purging (see above). */
export const VARIABLE = "MIMALLOC_PURGE_HOLES";
export const VALUE = "0";

/** Restarts this process under the tuned allocator, or returns (already tuned, or not possible). */
export function tuneAllocator(env: NodeJS.ProcessEnv = process.env): void {
  if (process.platform !== "linux" || env[VARIABLE] !== undefined) return;
  try {
    // The arguments and environment the process was started with, byte for byte (not as Bun
    // parsed or decoded them: a path need not be UTF-8).
    const argv = nulSeparated(readFileSync("/proc/self/cmdline"));
    const environ = nulSeparated(readFileSync("/proc/self/environ"));
    // The executable by its own path, not /proc/self/exe: the kernel names the process after the
    // file it runs (ps, top and pgrep would show "exe"). Replaced on disk meanwhile: run untuned.
    const exe = readlinkSync("/proc/self/exe", "buffer");
    if (!argv.length || exe.toString("latin1").endsWith(" (deleted)")) return;
    execve(exe, argv, [...environ, Buffer.from(`${VARIABLE}=${VALUE}`)]);
  } catch {
    // No /proc, no glibc (musl builds), no FFI: run untuned.
  }
}

/** The entries of one of /proc's NUL-terminated lists (cmdline, environ), as bytes. */
export function nulSeparated(b: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = b.indexOf(0); at !== -1; at = b.indexOf(0, from)) {
    parts.push(b.subarray(from, at));
    from = at + 1;
  }
  if (from < b.length) parts.push(b.subarray(from));
  return parts;
}

/** Returns only if the call failed. */
function execve(path: Buffer, argv: Buffer[], envp: Buffer[]): void {
  const libc = dlopen("libc.so.6", {
    execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  });
  // NUL-terminated strings and NULL-terminated pointer arrays; `keep` holds them until the call.
  const keep: Buffer[] = [];
  const cString = (bytes: Buffer) => {
    const b = Buffer.concat([bytes, Buffer.of(0)]);
    keep.push(b);
    return ptr(b);
  };
  const array = (xs: Buffer[]) => {
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
