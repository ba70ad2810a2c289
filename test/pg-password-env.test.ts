// A PostgreSQL password kept out of the command line (docs/postgres.md): a command's arguments are
// readable by every user of the host (`ps`), so `db copy --to postgres://user:password@…` showed
// the password to them. Bun's client reads PGPASSWORD when the URL carries none, as libpq does.
// On a cluster of this test's own, whose role `u` signs in with a password. PostgreSQL only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { onPostgres } from "./helpers/backend.ts";
import { runAssay } from "./helpers/cli.ts";
import { until } from "./helpers/fixtures.ts";
import { type PgCluster, startPgCluster } from "./helpers/pg-cluster.ts";
import { removeTestTempDirs, testTempDir } from "./helpers/temp.ts";

let cluster: PgCluster;
const url = (db: string) => `postgres://u@127.0.0.1:${cluster.port}/${db}`;
const assay = (args: string[], env: Record<string, string> = {}) =>
  runAssay(args, { env: { ASSAY_DATABASE_URL: "", ASSAY_DATA_DIR: "", PGPASSWORD: "", ...env } });

beforeAll(async () => {
  if (!onPostgres) return;
  cluster = await startPgCluster();
  const admin = new SQL(`${cluster.baseUrl}postgres`);
  await admin.unsafe("CREATE ROLE u LOGIN PASSWORD 'pw-kept-out'");
  for (const db of ["udb", "ucopy"]) await admin.unsafe(`CREATE DATABASE ${db} OWNER u`);
  // When the postmaster last read its configuration, as a new session sees it.
  const loadedAt = async () => {
    const c = new SQL(`${cluster.baseUrl}postgres`);
    try {
      return ((await c`SELECT pg_conf_load_time()::text AS t`) as { t: string }[])[0]!.t;
    } finally {
      await c.close();
    }
  };
  const before = await loadedAt();
  await admin.close();
  // The test's own connections stay trusted; role u needs its password over TCP.
  writeFileSync(
    join(cluster.dir, "data", "pg_hba.conf"),
    "local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n",
  );
  // pg_ctl reload only signals the postmaster: on a busy machine the first migrate connected
  // before it had read pg_hba.conf again, under the old trust rule. A session forked after the
  // reload sees its time, and the postmaster reads pg_hba.conf before it forks another.
  cluster.pgCtl("reload");
  await until(async () => (await loadedAt()) !== before, "the cluster to read pg_hba.conf again");
}, 60_000);
afterAll(() => {
  cluster?.stop();
  removeTestTempDirs();
});

describe.skipIf(!onPostgres)("PGPASSWORD instead of a password in the URL", () => {
  test("migrate: refused without it, served with it", async () => {
    const without = await assay(["migrate", "--database-url", url("udb")]);
    expect([without.code, without.out]).toEqual([1, ""]);
    expect(without.err).toContain('password authentication failed for user "u"');
    const withIt = await assay(["migrate", "--database-url", url("udb")], { PGPASSWORD: "pw-kept-out" });
    expect([withIt.code, withIt.err]).toEqual([0, ""]);
    expect(withIt.out).toStartWith(`PostgreSQL ${url("udb")}: schema 0 → `);
  });

  test("db copy from a data dir to a URL without its password", async () => {
    const dir = testTempDir("assay-pgpw-");
    const data = join(dir, "data");
    const init = await assay(["init", "--org", "acme", "--admin", "root", "--data-dir", data]);
    expect(init.code).toBe(0);
    const copy = await assay(["db", "copy", "--from", data, "--to", url("ucopy")], {
      PGPASSWORD: "pw-kept-out",
    });
    expect([copy.code, copy.err]).toEqual([0, ""]);
    const users = await assay(["users", "list", "--database-url", url("ucopy")], {
      PGPASSWORD: "pw-kept-out",
    });
    expect(users.code).toBe(0);
    expect(users.out).toContain("root");
  });
});
