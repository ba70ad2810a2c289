// Load from wrk: a generated Lua script sets the POST body and headers and, in done(), prints
// one machine-readable line. No per-response Lua callback: it would slow wrk itself and cap the
// baseline, flattering the ratio.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Machine } from "./machine.ts";
import { pin } from "./server.ts";

export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers outside 2xx/3xx, and socket errors (connect, read, write, timeout). */
  non2xx: number;
  socketErrors: number;
}

export interface WrkLoad {
  url: string;
  body: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  dir: string;
  /** GET sends no body (`body` is then ignored); POST by default. */
  method?: "GET" | "POST";
}

const luaString = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;

function luaScript(load: WrkLoad): string {
  const headers = Object.entries(load.headers)
    .map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`)
    .join("\n");
  if (load.method === "GET") return `wrk.method = "GET"\n${headers}\n${DONE}`;
  const bodyFile = join(load.dir, "wrk-body.bin");
  writeFileSync(bodyFile, load.body);
  return `wrk.method = "POST"
local f = assert(io.open(${luaString(bodyFile)}, "rb"))
wrk.body = f:read("*a")
f:close()
${headers}
${DONE}`;
}

const DONE = `function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCH {"requests":%d,"duration_us":%d,"p50":%d,"p99":%d,"max":%d,"non2xx":%d,"socket":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.status, e.connect + e.read + e.write + e.timeout))
end
`;

export async function runWrk(m: Machine, load: WrkLoad): Promise<WrkResult> {
  const script = join(load.dir, "wrk.lua");
  writeFileSync(script, luaScript(load));
  const args = [
    ...pin(m, m.loadCore),
    "wrk",
    "-t1",
    `-c${load.connections}`,
    `-d${load.seconds}s`,
    "--timeout",
    "30s",
    "--latency",
    "-s",
    script,
    load.url,
  ];
  const p = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  const line = /^BENCH (\{.*\})$/m.exec(out)?.[1];
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${err || out}`);
  const r = JSON.parse(line) as Record<string, number>;
  const seconds = r.duration_us! / 1e6;
  return {
    requests: r.requests!,
    seconds,
    rps: r.requests! / seconds,
    p50Ms: r.p50! / 1000,
    p99Ms: r.p99! / 1000,
    maxMs: r.max! / 1000,
    non2xx: r.non2xx!,
    socketErrors: r.socket!,
  };
}
