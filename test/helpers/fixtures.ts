// Workflow fixtures shared by run tests.
import { call } from "./server.ts";

type Server = { url: string };

export const SLOW_RULE = {
  id: "slow",
  expr: "data.items.all(x, data.items.exists(y, y == x))",
  message: "never shown",
};
/** A JSON workflow ("slow") whose one step runs SLOW_RULE: with slowDoc, runs that take seconds. */
export const SLOW_WORKFLOW = {
  slug: "slow",
  allowed_file_types: ["JSON"],
  steps: [{ name: "slow", validator: "assertions", config: { rules: [SLOW_RULE] } }],
};
/** A JSON document that makes SLOW_RULE take seconds (quadratic in n). */
export const slowDoc = (n = 6000) => JSON.stringify({ items: Array.from({ length: n }, (_, i) => i) });

export async function createWorkflow(s: Server, token: string, body: Record<string, unknown>, org = "acme") {
  const r = await call(s, "POST", `/api/v1/orgs/${org}/workflows/`, {
    token,
    body: { name: body.slug, ...body },
  });
  if (r.status !== 201) throw new Error(`workflow create failed: ${r.status} ${r.text}`);
  return r.json;
}

/** Polls until the run is final (bounded); returns the run. */
export async function waitForRun(s: Server, token: string, url: string, timeoutMs = 30000) {
  const path = url.startsWith("http") ? new URL(url).pathname : url;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call(s, "GET", path, { token });
    if (!["queued", "running"].includes(r.json.status)) return r.json;
    if (Date.now() > deadline) throw new Error(`run ${path} still ${r.json.status} after ${timeoutMs} ms`);
    await Bun.sleep(20);
  }
}
