// `npm run build` → dist/assay: one executable. The workers are extra entrypoints so that
// `new Worker(new URL("./jobs/worker.ts", import.meta.url))` resolves inside the binary
// (STYLE: traps). Autoload of .env and bunfig.toml is off: the binary must not change
// behaviour with the directory it is started from.
import { mkdirSync } from "node:fs";

mkdirSync("dist", { recursive: true });
const args = [
  "build",
  "--compile",
  "--minify",
  "--sourcemap=none",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  "--outfile=dist/assay",
  "src/main.ts",
  "src/jobs/worker.ts",
  "src/db/checkpoint-worker.ts",
  "src/runs/intake/worker.ts",
];
const started = performance.now();
const p = Bun.spawnSync([process.execPath, ...args], { stdout: "inherit", stderr: "inherit" });
if (p.exitCode !== 0) process.exit(p.exitCode ?? 1);
const size = Bun.file("dist/assay").size;
console.log(
  `dist/assay: ${(size / 1048576).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
