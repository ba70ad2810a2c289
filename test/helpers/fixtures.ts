// Workflow fixtures shared by run tests.
import { call } from "./server.ts";

type Server = { url: string };

export async function createWorkflow(s: Server, token: string, body: Record<string, unknown>, org = "acme") {
  const r = await call(s, "POST", `/api/v1/orgs/${org}/workflows/`, {
    token,
    body: { name: body.slug, ...body },
  });
  if (r.status !== 201) throw new Error(`workflow create failed: ${r.status} ${r.text}`);
  return r.json;
}

/** Polls `cond` until true (bounded): server state changes between event-loop turns. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

/** Polls until the run is final (bounded); returns the run. */
export async function waitForRun(s: Server, token: string, url: string, timeoutMs = 60_000) {
  const path = url.startsWith("http") ? new URL(url).pathname : url;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call(s, "GET", path, { token });
    if (!["queued", "running"].includes(r.json.status)) return r.json;
    if (Date.now() > deadline) throw new Error(`run ${path} still ${r.json.status} after ${timeoutMs} ms`);
    await Bun.sleep(20);
  }
}
