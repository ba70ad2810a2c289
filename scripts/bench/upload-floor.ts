// The floor of measure 8b: a bare Bun.serve that reads every request body exactly as Assay reads a
// large run request (src/http/body.ts) and answers 201, plus /healthz. What /healthz gets while
// four clients upload 24 MB bodies to it is what the stack allows; Assay's figure beside it is what
// Assay adds. Usage: bun scripts/bench/upload-floor.ts (prints the URL it listens on).
import { readBody } from "../../src/http/body.ts";

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  maxRequestBodySize: Number.MAX_SAFE_INTEGER,
  async fetch(req) {
    if (new URL(req.url).pathname === "/healthz")
      return new Response('{"status":"ok"}', { headers: { "content-type": "application/json" } });
    const body = await readBody(req, 26214400);
    return new Response(JSON.stringify({ size: body.byteLength }), {
      status: 201,
      headers: { "content-type": "application/json" },
    });
  },
});
process.stdout.write(`listening on http://127.0.0.1:${server.port}\n`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
