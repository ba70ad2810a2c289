// The baseline of the HTTP measure: a bare Bun.serve that answers every request with the same
// 200-byte JSON body. Usage: bun scripts/bench/baseline-server.ts (prints the URL it listens on).
const body = JSON.stringify({ status: "ok", pad: "" });
const fixed = JSON.stringify({ status: "ok", pad: "x".repeat(200 - body.length) });
if (fixed.length !== 200) throw new Error("the baseline body must be 200 bytes");

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response(fixed, { headers: { "content-type": "application/json" } }),
});
process.stdout.write(`listening on http://127.0.0.1:${server.port}\n`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
export {}; // a module: no globals shared with the other scripts
