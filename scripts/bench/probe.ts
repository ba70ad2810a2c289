// The /healthz prober of measure 6, a process of its own: `bun probe.ts URL SECONDS INTERVAL_MS`.
// One request at a time, one every INTERVAL_MS, each timed from send to the last byte; prints
// the sorted latencies (ms) as JSON. Apart from the load generator, so that the client's own work
// (parsing run lists) cannot delay a probe and be counted as the server's.
const [url, seconds, interval] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const until = performance.now() + seconds * 1000;
const latencies: number[] = [];
let failures = 0;
while (performance.now() < until) {
  const t = performance.now();
  try {
    const r = await fetch(`${url}/healthz`);
    await r.arrayBuffer();
    if (r.status === 200) latencies.push(performance.now() - t);
    else failures++;
  } catch {
    failures++;
  }
  const left = interval - (performance.now() - t);
  if (left > 0) await Bun.sleep(left);
}
latencies.sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ latencies, failures })}\n`);
export {};
