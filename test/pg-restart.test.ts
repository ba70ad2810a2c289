// PostgreSQL goes away under load and comes back (PostgreSQL only): meanwhile requests get 503
// service_unavailable with Retry-After and /readyz fails; afterwards the same server — not
// restarted — serves again, and every run it acknowledged exists and finishes.
import { SYSTEM } from "../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { SQL } from "bun";
import { testConfig } from "../src/config.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { onPostgres } from "./helpers/backend.ts";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { type PgCluster, startPgCluster } from "./helpers/pg-cluster.ts";
import { call, errorBody } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

let cluster: PgCluster;
let server: RunningServer;
let token = "";
// Made by the helper: the file is loaded on the SQLite pass too, where its tests are skipped.
const dataDir = testTempDir("assay-pgrestart-");

/** Polls until `cond` holds (bounded); the condition is the state of the world, not time. */
async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

describe.skipIf(!onPostgres)("PostgreSQL restarts under load", () => {
  beforeAll(async () => {
    cluster = await startPgCluster();
    const admin = new SQL(`${cluster.baseUrl}postgres`);
    await admin.unsafe("CREATE DATABASE assay");
    await admin.close();
    server = await startServer(
      testConfig({
        port: 0,
        log_level: "silent",
        rate_limit_disabled: true,
        workers: 2,
        data_dir: dataDir,
        database_url: `${cluster.baseUrl}assay`,
      }),
    );
    const d = server.deps;
    const org = await d.orgs.create("acme", "Acme", SYSTEM);
    const root = await d.users.create({ username: "root", is_admin: true }, SYSTEM);
    await d.orgs.addMember(org.id, root.id, "admin", SYSTEM);
    token = (await d.tokens.create(root.id, "t", null, SYSTEM)).token;
    await createWorkflow(server, token, {
      slug: "orders",
      allowed_file_types: ["JSON"],
      steps: [{ name: "schema", validator: "json_schema", config: { schema: { type: "object" } } }],
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("503 with Retry-After while it is down, then served again without a restart; nothing acknowledged is lost", async () => {
    const acked = new Set<string>();
    const outage: Record<string, unknown>[] = [];
    const other = new Map<number, number>();
    let stop = false;
    let n = 0;
    const client = async (async: boolean) => {
      while (!stop) {
        const r = await call(server, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
          token,
          raw: JSON.stringify({ n: n++ }),
          headers: { "content-type": "application/json", ...(async ? { prefer: "respond-async" } : {}) },
        });
        if (r.status === 201 || r.status === 202) acked.add(r.json.id);
        else if (r.status === 503) {
          expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
          outage.push(r.json);
        } else other.set(r.status, (other.get(r.status) ?? 0) + 1);
      }
    };
    const load = [client(false), client(true), client(false), client(true)];
    await until(() => acked.size >= 20, "runs acknowledged before the outage");
    cluster.halt();
    await until(() => outage.length >= 3, "503 answers during the outage");
    const ready = await call(server, "GET", "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.json).toEqual(errorBody(503, "service_unavailable", "The database is not available."));
    const before = acked.size;
    cluster.start();
    await until(() => acked.size >= before + 20, "runs acknowledged after the outage");
    stop = true;
    await Promise.all(load);
    expect(other).toEqual(new Map());
    for (const body of outage) expect(body).toEqual(errorBody(503, "service_unavailable"));
    expect((await call(server, "GET", "/readyz")).status).toBe(200);
    for (const id of acked) {
      const run = await waitForRun(server, token, `/api/v1/orgs/acme/runs/${id}/`, 60_000);
      expect(run.status).toBe("succeeded");
    }
  }, 180_000);
});
