// docs/deploy.md's table of metrics is what an operator reads to write dashboards and alerts:
// every family /metrics serves must be a row with its type and labels, and every row must name a
// family the server serves (a metric renamed or added in one place only fails here by name). The
// server runs with two HTTP threads, so the families that exist only then are served too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { onPostgres } from "./helpers/backend.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

interface Row {
  type: string;
  labels: string[];
}

/** The table's rows: `| `assay_x` | type | `label` (`value`, …), … | what it counts |`. */
async function documented(): Promise<Map<string, Row>> {
  const text = await Bun.file(new URL("../docs/deploy.md", import.meta.url)).text();
  const rows = new Map<string, Row>();
  for (const line of text.split("\n")) {
    const m = /^\| `(assay_[a-z_]+)` \| (\w+) \| ([^|]*) \|/.exec(line);
    if (!m) continue;
    const labels = [...m[3]!.replace(/\([^)]*\)/g, "").matchAll(/`([a-z_]+)`/g)].map((x) => x[1]!);
    rows.set(m[1]!, { type: m[2]!, labels: labels.sort() });
  }
  return rows;
}

/** The served families: type from `# TYPE`, label names from the samples (`le`, `node` aside). */
function served(text: string): Map<string, Row> {
  const families = new Map<string, Row>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm))
    families.set(name!, { type: type!, labels: [] });
  for (const [, sample, labels] of text.matchAll(/^([a-z_]+)\{([^}]*)\}/gm)) {
    const family = families.get(sample!.replace(/_(bucket|sum|count)$/, "")) ?? families.get(sample!);
    if (!family) continue;
    for (const [, label] of labels!.matchAll(/([a-z_]+)="/g))
      if (label !== "le" && label !== "node" && !family.labels.includes(label!)) family.labels.push(label!);
  }
  for (const f of families.values()) f.labels.sort();
  return families;
}

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ http_threads: 2 });
  // A finished run, so the step and run families have samples whose labels can be read.
  const wf = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug: "metrics",
      name: "Metrics",
      allowed_file_types: ["JSON"],
      steps: [{ name: "syntax", validator: "syntax", config: {} }],
    },
  });
  expect(wf.status).toBe(201);
  const run = await call(s, "POST", "/api/v1/orgs/acme/workflows/metrics/runs/", {
    token: s.rootToken,
    body: { id: 1 },
  });
  expect(run.status).toBe(201);
});
afterAll(() => s.close());

describe("docs/deploy.md's metrics table", () => {
  test("every served family is a row with its type and labels, and every row is served", async () => {
    const m = await call(s, "GET", "/metrics", { token: s.rootToken });
    expect(m.status).toBe(200);
    const got = served(m.text);
    const rows = await documented();
    // The SQLite write lock of the HTTP threads: no such lock on PostgreSQL.
    if (onPostgres) rows.delete("assay_db_write_lock_held_seconds_total");
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(got));
  });
});
