// The yardstick of measure 3: decoding and JSON.parse of the same bytes the server validates,
// run pinned to the server's core. Prints the median of several runs in milliseconds.
// Usage: bun scripts/bench/parse-baseline.ts FILE [REPEATS]
const bytes = await Bun.file(process.argv[2]!).bytes();
const repeats = Number(process.argv[3] ?? 5);
const times: number[] = [];
for (let i = 0; i < repeats; i++) {
  const t = performance.now();
  JSON.parse(new TextDecoder().decode(bytes));
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
process.stdout.write(`${times[times.length >> 1]}\n`);
export {}; // a module: top-level await, no globals shared with other scripts
