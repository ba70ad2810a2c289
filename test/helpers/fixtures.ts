// Workflow fixtures shared by run tests.
import { SYSTEM } from "../../src/audit/actor.ts";
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

/**
 * A server's database seeded straight through its stores: org "acme" with an instance admin
 * "root" as its Admin (with `password`, if given), root's token, and a workflow "q" with one
 * syntax step. For tests of several servers on one database (test/nodes*.test.ts).
 */
export async function seedAcme(
  s: Server & { deps: import("../../src/deps.ts").Deps },
  password?: string,
): Promise<{ token: string; rootId: number }> {
  const seeded = await seedRoot(s, password);
  await createWorkflow(s, seeded.token, {
    slug: "q",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  return seeded;
}

/**
 * Org "acme" with an instance admin "root" as its Admin (with `password`, if given) and root's
 * token, straight through the server's stores: for servers a test starts with startServer itself.
 */
export async function seedRoot(
  s: { deps: import("../../src/deps.ts").Deps },
  password?: string,
): Promise<{ token: string; rootId: number }> {
  const d = s.deps;
  const org = await d.orgs.create("acme", "Acme", SYSTEM);
  const root = await d.users.create({ username: "root", is_admin: true }, SYSTEM);
  if (password) await d.users.setPassword(root.id, await Bun.password.hash(password), SYSTEM);
  await d.orgs.addMember(org.id, root.id, "admin", SYSTEM);
  const token = (await d.tokens.create(root.id, "t", null, SYSTEM)).token;
  return { token, rootId: root.id };
}
