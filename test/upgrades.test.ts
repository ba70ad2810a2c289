// Rolling upgrades (docs/deploy.md): a server of the release before starts on a schema a newer
// release migrated when every newer migration is additive (the old nodes keep running while the
// new ones come up), and refuses to start — with a message that says what to do — when one is not.
// Simulated by recording a migration newer than this build in the database it opens.
import { afterAll, describe, expect, test } from "bun:test";
import { testConfig } from "../src/config.ts";
import { LATEST } from "../src/db/migrate.ts";
import { run } from "../src/db/program.ts";
import { startServer } from "../src/server.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const open: TestServer[] = [];
afterAll(async () => {
  for (const s of open) await s.close().catch(() => {});
});

async function withNewerMigration(additive: boolean) {
  const s = await startTestServer();
  open.push(s);
  await s.deps.db.exec(
    run(
      "INSERT INTO assay_schema_migrations (version, name, applied_at, additive) VALUES (?, 'from_a_newer_release', ?, ?)",
      LATEST + 1,
      new Date().toISOString(),
      additive ? 1 : 0,
    ),
  );
  await s.stop();
  return testConfig({
    port: 0,
    log_level: "silent",
    workers: 1,
    data_dir: s.dataDir,
    database_url: s.databaseUrl,
  });
}

describe("a server of the release before, on a newer schema", () => {
  test("starts when the newer migrations are additive, and serves", async () => {
    const config = await withNewerMigration(true);
    const again = await startServer(config);
    try {
      expect((await call(again, "GET", "/readyz")).status).toBe(200);
    } finally {
      await again.stop();
    }
  });

  test("refuses to start, saying which schema and what to do, when one is not", async () => {
    const config = await withNewerMigration(false);
    await expect(startServer(config)).rejects.toThrow(
      `written by a newer Assay (schema ${LATEST + 1}, this build knows ${LATEST}). Run the newer binary, or restore a backup taken before the upgrade.`,
    );
  });
});
