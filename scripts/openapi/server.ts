// A real Assay server for the OpenAPI checks (scripts/openapi/*.ts): a temp data dir, port 0,
// default settings (rate limits on, as users run it), an admin token, and the document it serves.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SYSTEM } from "../../src/audit/actor.ts";
import { testConfig } from "../../src/config.ts";
import { startServer } from "../../src/server.ts";

export interface CheckServer {
  url: string;
  token: string;
  org: string;
  /** The OpenAPI document as served. */
  document: string;
  close(): Promise<void>;
}

export async function startCheckServer(): Promise<CheckServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "assay-openapi-"));
  const server = await startServer(testConfig({ data_dir: dataDir, port: 0, log_level: "warn", workers: 1 }));
  const d = server.deps;
  const user = await d.users.create({ username: "integrator", is_admin: true }, SYSTEM);
  const org = await d.orgs.create("acme", "ACME", SYSTEM);
  await d.orgs.addMember(org.id, user.id, "admin", SYSTEM);
  const { token } = await d.tokens.create(user.id, "openapi-check", null, SYSTEM);
  const res = await fetch(`${server.url}/api/v1/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.status}`);
  return {
    url: server.url,
    token,
    org: "acme",
    document: await res.text(),
    async close() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
