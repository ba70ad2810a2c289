// A server on a PostgreSQL cluster of its own, for the tests that stop the cluster under a running
// server (the shared test server's database must never go away): org "acme", an instance admin's
// token, and a workflow "orders" of the given steps. `stop()` ends server and cluster and removes
// the data dir.
import { rmSync } from "node:fs";
import { SQL } from "bun";
import { SYSTEM } from "../../src/audit/actor.ts";
import { testConfig } from "../../src/config.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { createWorkflow } from "./fixtures.ts";
import { type PgCluster, startPgCluster } from "./pg-cluster.ts";

export interface OwnCluster {
  cluster: PgCluster;
  server: RunningServer;
  token: string;
  stop(): Promise<void>;
}

export async function startOnOwnCluster(
  dataDir: string,
  config: Record<string, unknown>,
  steps: unknown[],
): Promise<OwnCluster> {
  const cluster = await startPgCluster();
  const admin = new SQL(`${cluster.baseUrl}postgres`);
  await admin.unsafe("CREATE DATABASE assay");
  await admin.close();
  const server = await startServer(
    testConfig({
      port: 0,
      log_level: "silent",
      rate_limit_disabled: true,
      ...config,
      data_dir: dataDir,
      database_url: `${cluster.baseUrl}assay`,
    }),
  );
  const d = server.deps;
  const org = await d.orgs.create("acme", "Acme", SYSTEM);
  const root = await d.users.create({ username: "root", is_admin: true }, SYSTEM);
  await d.orgs.addMember(org.id, root.id, "admin", SYSTEM);
  const token = (await d.tokens.create(root.id, "t", null, SYSTEM)).token;
  await createWorkflow(server, token, { slug: "orders", allowed_file_types: ["JSON"], steps });
  return {
    cluster,
    server,
    token,
    async stop() {
      await server.stop();
      cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
