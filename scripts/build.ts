// `npm run build` → dist/assay: one executable; and dist/assay-validate.mjs, the CI client alone:
// one JavaScript file for Node ≥ 20 and Bun (about 40 KB, where a compiled binary of the same client
// weighs ~104 MiB, the Bun runtime included: docs/decisions.md). The workers are extra entrypoints so that
// `new Worker(new URL("./jobs/worker.ts", import.meta.url))` resolves inside the binary
// (STYLE: traps). Autoload of .env and bunfig.toml is off: the binary must not change
// behaviour with the directory it is started from. Code splitting: the program is a dynamic import
// of the entry (src/main.ts), so its chunk is read only once `serve` has decided not to restart
// itself under the tuned allocator (src/lib/allocator.ts) — the restart costs ~40 ms, not ~150.
//
// Each output is written under a name of its own and renamed into place when whole: two builds at
// once (the test passes run side by side, and each builds a missing binary: test/helpers/binary.ts)
// never leave a half-written file where the other starts it (ETXTBSY, or a truncated program).
import { chmodSync, mkdirSync, renameSync, rmSync } from "node:fs";

mkdirSync("dist", { recursive: true });
const partial = (name: string) => `dist/.${name}.${process.pid}.partial`;
/** Renames a finished output into place (atomic on one file system). */
const place = (name: string) => renameSync(partial(name), `dist/${name}`);
process.on("exit", () => {
  for (const name of ["assay", "assay-validate.mjs"]) rmSync(partial(name), { force: true });
});
const args = [
  "build",
  "--compile",
  "--minify",
  "--sourcemap=none",
  "--splitting",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  `--outfile=${partial("assay")}`,
  "src/main.ts",
  "src/jobs/worker.ts",
  "src/db/checkpoint-worker.ts",
  "src/db/writer-thread.ts",
  "src/runs/intake/worker.ts",
  "src/workflows/check-worker.ts",
  "src/http/threads/worker.ts",
];
const started = performance.now();
const p = Bun.spawnSync([process.execPath, ...args], { stdout: "inherit", stderr: "inherit" });
if (p.exitCode !== 0) process.exit(p.exitCode ?? 1);
place("assay");
const size = Bun.file("dist/assay").size;
console.log(
  `dist/assay: ${(size / 1048576).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);

// ESM in a .mjs file: Node reads it as a module whatever package.json is near it (an
// extensionless file is CommonJS outside a "type": "module" package and ESM inside one).
const light = Bun.spawnSync(
  [
    process.execPath,
    "build",
    "--target=node",
    "--format=esm",
    "--minify",
    "--banner=#!/usr/bin/env node",
    `--outfile=${partial("assay-validate.mjs")}`,
    "src/cli/light.ts",
  ],
  { stdout: "ignore", stderr: "inherit" },
);
if (light.exitCode !== 0) process.exit(light.exitCode ?? 1);
chmodSync(partial("assay-validate.mjs"), 0o755);
place("assay-validate.mjs");
console.log(`dist/assay-validate.mjs: ${(Bun.file("dist/assay-validate.mjs").size / 1024).toFixed(1)} KiB`);
