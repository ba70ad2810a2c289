// A public /metrics (ASSAY_METRICS_ENABLED) answers while PostgreSQL is away, when an operator
// needs it most: it was a 503, since the queue gauges count rows first. Those two series are left
// out of that scrape; the rest (the 503s counted meanwhile) is there. PostgreSQL only: the
// cluster is stopped under the running server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RunningServer } from "../src/server.ts";
import { onPostgres } from "./helpers/backend.ts";
import { type OwnCluster, startOnOwnCluster } from "./helpers/own-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";
import { call, errorBody } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";
import { sample } from "./helpers/threads.ts";

let own: OwnCluster | undefined;
let cluster: PgCluster;
let server: RunningServer;
let token = "";
const dataDir = testTempDir("assay-metrics-outage-");
const RUNS = "/api/v1/orgs/acme/workflows/orders/runs/";

beforeAll(async () => {
  if (!onPostgres) return;
  own = await startOnOwnCluster(dataDir, { metrics_enabled: true, node_id: "n1", workers: 1 }, [
    { name: "syntax", validator: "syntax", config: {} },
  ]);
  ({ cluster, server, token } = own);
}, 120_000);

afterAll(() => own?.stop());

const started = (status: string, m: string) =>
  sample(m, "assay_http_request_duration_seconds_count", {
    route: RUNS.replace("acme", ":org_slug").replace("orders", ":workflow"),
    method: "POST",
    status,
  });

test.skipIf(!onPostgres)(
  "200 with the request counts while the database is away; the queue gauges come back with it",
  async () => {
    const before = await call(server, "GET", "/metrics");
    expect(before.status).toBe(200);
    expect(sample(before.text, "assay_runs_queued", { node: "n1" })).toBe(0);
    cluster.halt();
    try {
      const refused = await call(server, "POST", RUNS, {
        token,
        raw: "{}",
        headers: { "content-type": "application/json" },
      });
      expect(refused.status).toBe(503);
      expect(refused.json).toEqual(errorBody(503, "service_unavailable"));
      const during = await call(server, "GET", "/metrics");
      expect(during.status).toBe(200);
      expect(during.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      expect(started("503", during.text)).toBe(1);
      expect(during.text).not.toContain("assay_runs_queued{");
      expect(during.text).not.toContain("assay_runs_running{");
      expect(sample(during.text, "assay_workers", { node: "n1", state: "idle" })).toBe(1);
    } finally {
      cluster.start();
    }
    const after = await call(server, "GET", "/metrics");
    expect(after.status).toBe(200);
    expect(sample(after.text, "assay_runs_queued", { node: "n1" })).toBe(0);
    expect(sample(after.text, "assay_runs_running", { node: "n1" })).toBe(0);
  },
  120_000,
);
