// PostgreSQL goes away under load and comes back (PostgreSQL only): meanwhile requests get 503
// service_unavailable with Retry-After and /readyz fails; afterwards the same server — not
// restarted — serves again, and every run it acknowledged exists and finishes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RunningServer } from "../src/server.ts";
import { onPostgres } from "./helpers/backend.ts";
import { until, waitForRun } from "./helpers/fixtures.ts";
import { type OwnCluster, startOnOwnCluster } from "./helpers/own-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";
import { call, errorBody } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

let own: OwnCluster | undefined;
let cluster: PgCluster;
let server: RunningServer;
let token = "";
// Made by the helper: the file is loaded on the SQLite pass too, where its tests are skipped.
const dataDir = testTempDir("assay-pgrestart-");

describe.skipIf(!onPostgres)("PostgreSQL restarts under load", () => {
  beforeAll(async () => {
    own = await startOnOwnCluster(dataDir, { workers: 2 }, [
      { name: "schema", validator: "json_schema", config: { schema: { type: "object" } } },
    ]);
    ({ cluster, server, token } = own);
  }, 120_000);

  afterAll(() => own?.stop());

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
    await until(() => acked.size >= 20, "runs acknowledged before the outage", 60_000);
    cluster.halt();
    await until(() => outage.length >= 3, "503 answers during the outage", 60_000);
    const ready = await call(server, "GET", "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.json).toEqual(errorBody(503, "service_unavailable", "The database is not available."));
    const before = acked.size;
    cluster.start();
    await until(() => acked.size >= before + 20, "runs acknowledged after the outage", 60_000);
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
