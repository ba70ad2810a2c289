// Db.read runs a program of reads on one snapshot (src/db/program.ts): a webhook delivery and its
// attempts agree whatever commits meanwhile. On SQLite it ran the statements back to back on one
// connection outside a transaction, where each reads its own snapshot: a commit by another
// connection between two of them (the writer thread, an HTTP thread, the CLI) was seen by the
// second only. Made exact: the program itself commits through a second connection between its two
// statements (a generator runs code between the statements it yields).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { get } from "../src/db/program.ts";
import { onPostgres } from "./helpers/backend.ts";
import { type TestServer, startTestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

test.skipIf(onPostgres)(
  "SQLite: a commit between a read program's statements is not seen by it",
  async () => {
    const other = new Database(join(s.dataDir, "assay.db"));
    try {
      const orgs = () => get<{ n: number }>("SELECT count(*) AS n FROM orgs");
      const seen = await s.deps.db.read(
        (function* () {
          const before = (yield* orgs())!.n;
          other.run(
            "INSERT INTO orgs (slug, name, status, created_at) VALUES ('late', 'Late', 'active', '2026-11-29T00:00:00.000Z')",
          );
          return [before, (yield* orgs())!.n];
        })(),
      );
      expect(seen[1]).toBe(seen[0]);
      // Committed all the same: the next read sees it.
      expect((await s.deps.db.read(orgs()))!.n).toBe(seen[0]! + 1);
    } finally {
      other.close();
    }
  },
);
