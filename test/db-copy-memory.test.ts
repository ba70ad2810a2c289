// `assay db copy` holds a bounded number of bytes of rows at once, whatever the content: it read
// and wrote 500 rows per statement, so 500 submissions of up to 1 MiB each (content above that
// is in slices of 256 KiB, 500 of them another 125 MiB) were one read and one INSERT (measured 2026-11-29: 30 runs of 20 MiB and 300 of 0.9 MiB, 870 MB in all, peaked at 2.9 GB
// RSS SQLite → PostgreSQL and 2.4 GB back). Each read the copy makes, of the source and of the
// target (verification), is measured here in bytes, both ways. Runs in the SQLite pass, when
// PostgreSQL is installed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CHUNK_BYTES, copyInstallation } from "../src/db/copy.ts";
import { openDb } from "../src/db/open.ts";
import type { PgDb } from "../src/db/postgres.ts";
import type { Db, Program } from "../src/db/program.ts";
import { SLICED_ABOVE_BYTES } from "../src/runs/content-store.ts";
import { emptyPgDatabase, onPostgres } from "./helpers/backend.ts";
import { createWorkflow, waitForRun } from "./helpers/fixtures.ts";
import { pgBinDir } from "./helpers/pg-cluster.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

/** The largest row: a submission with its content inline (up to 1 MiB) and its metadata (16 KiB). */
const LARGEST_ROW = SLICED_ABOVE_BYTES + 64 * 1024;

const sizeOf = (v: unknown): number =>
  v instanceof Uint8Array ? v.byteLength : typeof v === "string" ? Buffer.byteLength(v) : 8;

/** `db`, with the largest answer (in bytes) of any one statement it ran kept in `most.bytes`. */
function measured<D extends Db>(db: D, most: { bytes: number }): D {
  const step = (p: Program<unknown>): Program<unknown> =>
    (function* () {
      let r = p.next();
      while (!r.done) {
        const out: unknown = yield r.value;
        if (Array.isArray(out)) {
          let n = 0;
          for (const row of out) for (const v of Object.values(row as object)) n += sizeOf(v);
          most.bytes = Math.max(most.bytes, n);
        }
        r = p.next(out);
      }
      return r.value;
    })();
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key === "exec") return (p: Program<unknown>) => target.exec(step(p));
      if (key === "snapshot")
        return (work: (v: Db) => Promise<unknown>) =>
          (target as unknown as PgDb).snapshot((v) => work(measured(v, most)));
      return Reflect.get(target, key, receiver);
    },
  });
}

describe.skipIf(onPostgres || !pgBinDir())("assay db copy: memory", () => {
  let s: TestServer;
  const drops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    s = await startTestServer();
    await createWorkflow(s, s.rootToken, {
      slug: "t",
      allowed_file_types: ["TEXT"],
      steps: [{ name: "size", validator: "text_rules", config: { max_bytes: 100 } }],
    });
    // 4 documents of 3 MiB (48 slices) and 12 of 0.9 MiB kept inline: 22.8 MiB of content.
    for (const [n, bytes] of [
      [4, 3 * 1024 * 1024],
      [12, 900 * 1024],
    ] as const)
      for (let i = 0; i < n; i++) {
        const r = await call(s, "POST", "/api/v1/orgs/acme/workflows/t/runs/", {
          token: s.rootToken,
          raw: `${i}`.padEnd(bytes, "x"),
          headers: { "content-type": "text/plain", prefer: "respond-async" },
        });
        expect(r.status).toBe(202);
        await waitForRun(s, s.rootToken, r.json.url);
      }
    expect(await s.count("content_chunks")).toBe(48);
    await s.stop();
  }, 120_000);

  afterAll(async () => {
    await s.close();
    for (const d of drops) await d();
  });

  test(`no statement of a copy reads more than CHUNK_BYTES (${CHUNK_BYTES}) and a row, both ways`, async () => {
    const pg = await emptyPgDatabase();
    drops.push(pg.drop);
    const most = { there: { bytes: 0 }, back: { bytes: 0 } };
    const sqlite = await openDb({ data_dir: s.dataDir, database_url: null });
    const onPg = await openDb({ data_dir: testTempDir("assay-mem-"), database_url: pg.url });
    try {
      const there = await copyInstallation(measured(sqlite, most.there), measured(onPg, most.there));
      expect(there.state).toBe("copied");
    } finally {
      await sqlite.close();
    }
    const back = await openDb({ data_dir: testTempDir("assay-mem-back-"), database_url: null });
    try {
      const again = await copyInstallation(measured(onPg, most.back), measured(back, most.back));
      expect(again.state).toBe("copied");
      expect(again.state === "copied" && again.tables.find((t) => t.table === "content_chunks")?.rows).toBe(
        48,
      );
    } finally {
      await back.close();
      await onPg.close();
    }
    expect(most.there.bytes).toBeGreaterThan(0);
    expect(most.there.bytes).toBeLessThanOrEqual(CHUNK_BYTES + LARGEST_ROW);
    expect(most.back.bytes).toBeLessThanOrEqual(CHUNK_BYTES + LARGEST_ROW);
  }, 120_000);
});
