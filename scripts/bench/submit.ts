// A fixed-count load generator (wrk runs for a duration, measure 2 needs an exact count): POSTs
// the body in a file N times over C connections, prints one JSON line with the elapsed time and
// the answers by status. Usage: bun scripts/bench/submit.ts URL N C BODY_FILE HEADERS_JSON
const [url, n, c, bodyFile, headersJson] = process.argv.slice(2);
const total = Number(n);
const body = await Bun.file(bodyFile!).bytes();
const headers = JSON.parse(headersJson!) as Record<string, string>;
const statuses: Record<string, number> = {};
let next = 0;

async function loop() {
  while (next < total) {
    next++;
    const res = await fetch(url!, { method: "POST", headers, body });
    await res.arrayBuffer();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: Number(c) }, loop));
const seconds = (performance.now() - started) / 1000;
process.stdout.write(`${JSON.stringify({ seconds, statuses })}\n`);
export {}; // a module: top-level await, no globals shared with other scripts
