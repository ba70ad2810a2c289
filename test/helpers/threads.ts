// Tests of ASSAY_HTTP_THREADS (test/http-threads*.test.ts): requests on fresh connections, so
// the kernel spreads them over the listeners, and a check that needs a given thread and path
// repeats its request (bounded) until that thread's counter says it served it.
import type { ThreadCounts, ThreadPath } from "../../src/http/threads/relay.ts";
import type { TestServer, call } from "./server.ts";

export type Answer = Awaited<ReturnType<typeof call>>;

/** A fresh connection per request: the kernel picks the listener for each. */
export const fresh = (o: Parameters<typeof call>[3] = {}) => ({
  ...o,
  headers: { ...o.headers, connection: "close" },
});

/** Sends until the thread's counter for `path` grows by one (sequential: the growth is this request's). */
export async function via(
  s: TestServer,
  thread: number,
  path: ThreadPath,
  send: () => Promise<Answer>,
): Promise<Answer> {
  const counts = s.threadCounts as ThreadCounts;
  for (let i = 0; i < 200; i++) {
    const before = counts.get(thread, path);
    const r = await send();
    if (counts.get(thread, path) > before) return r;
  }
  throw new Error(`no request reached thread ${thread} (${path}) in 200 tries`);
}

/**
 * The headers a client sees, without the ones that differ by nature (date, ids, lengths of ids);
 * the request's id (each answer's own, src/http/request-log.ts) as "<request id>" when it is one.
 */
export function headersOf(r: Answer, drop: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  r.headers.forEach((v, k) => {
    if (k === "x-request-id") out[k] = /^[A-Za-z0-9._:/+=@-]{1,128}$/.test(v) ? "<request id>" : v;
    else if (!["date", "content-length", "location", ...drop].includes(k)) out[k] = v;
  });
  return out;
}

const VARIES = new Set([
  "id",
  "url",
  "version_url",
  "created_at",
  "started_at",
  "finished_at",
  "duration_ms",
]);
/** The run's shape with ids, URLs (ports) and times blanked. */
export function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, VARIES.has(k) ? typeof x : shape(x)]));
  return v;
}

/** A series' value in Prometheus text: the line of `name` whose labels include `labels` (node aside). */
export function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const got = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(line.split(" ").pop());
  }
  return Number.NaN;
}
