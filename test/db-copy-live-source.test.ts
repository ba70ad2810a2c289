// `assay db copy` from a source that a server is still writing: the copy reads the source on one
// snapshot, so a run committed meanwhile is left out whole — never copied without its
// submission. Until 2026-11-29 a PostgreSQL source was read statement by statement: a run started
// between the copy of `submissions` and that of `runs` reached the target without its submission
// ("assay db: FOREIGN KEY constraint failed", exit 1, the target half written). The write is made
// at a fixed point of the copy (just before its first row of `submissions` is written to the
// target), not raced against it. Runs in the SQLite pass, when PostgreSQL is installed.
import { afterAll, describe, expect, test } from "bun:test";
import { SYSTEM } from "../src/audit/actor.ts";
import { testConfig } from "../src/config.ts";
import { copyInstallation } from "../src/db/copy.ts";
import { type AnyDb, openDb } from "../src/db/open.ts";
import { type Db, type Program, count } from "../src/db/program.ts";
import { READS } from "../src/db/migrate.ts";
import { type RunningServer, startServer } from "../src/server.ts";
import { emptyPgDatabase, freshPgDatabase, onPostgres } from "./helpers/backend.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { pgBinDir } from "./helpers/pg-cluster.ts";
import { call } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

const JSON_CT = { "content-type": "application/json" };
const dbs: { drop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const d of dbs) await d.drop();
});

/** A target whose first write into `table` waits for `before` first. */
function writingFirst(to: AnyDb, table: string, before: () => Promise<void>): Db {
  let done = false;
  return new Proxy(to, {
    get(target, key, receiver) {
      if (key !== "tx") return Reflect.get(target, key, receiver);
      return async <T>(make: () => Program<T>) => {
        const first = make().next().value as { sql?: string } | undefined;
        if (!done && first?.sql?.startsWith(`INSERT INTO ${table} `)) {
          done = true;
          await before();
        }
        return target.tx(make);
      };
    },
  });
}

async function seeded(server: RunningServer, token: string) {
  await createWorkflow(server, token, {
    slug: "w",
    allowed_file_types: ["JSON"],
    steps: [{ name: "syntax", validator: "syntax", config: {} }],
  });
  const start = () =>
    call(server, "POST", "/api/v1/orgs/acme/workflows/w/runs/", {
      token,
      raw: '{"id": 1}',
      headers: { ...JSON_CT, prefer: "wait=60" },
    });
  for (let i = 0; i < 3; i++) expect((await start()).status).toBe(201);
  return start;
}

async function runsOf(db: Db) {
  return {
    runs: await db.exec(count("SELECT count(*) AS n FROM runs")),
    orphans: await db.exec(
      count(
        "SELECT count(*) AS n FROM runs r WHERE NOT EXISTS (SELECT 1 FROM submissions s WHERE s.id = r.submission_id)",
      ),
    ),
  };
}

describe.skipIf(onPostgres || !pgBinDir())("assay db copy from a source a server is writing", () => {
  for (const from of ["postgres", "sqlite"] as const)
    test(`${from} source: a run started during the copy is left out whole; the copy verifies`, async () => {
      const dataDir = testTempDir("assay-live-src-");
      const source = from === "postgres" ? await freshPgDatabase() : null;
      if (source) dbs.push(source);
      const server = await startServer(
        testConfig({
          port: 0,
          log_level: "silent",
          rate_limit_disabled: true,
          workers: 1,
          data_dir: dataDir,
          database_url: source?.url ?? null,
        }),
      );
      const src = await openDb(
        { data_dir: dataDir, database_url: source?.url ?? null },
        { privileges: READS },
      );
      let dst: AnyDb | null = null;
      try {
        const admin = await server.deps.users.create({ username: "root", is_admin: true }, SYSTEM);
        await server.deps.orgs.addMember(
          (await server.deps.orgs.create("acme", "ACME", SYSTEM)).id,
          admin.id,
          "admin",
          SYSTEM,
        );
        const { token } = await server.deps.tokens.create(admin.id, "t", null, SYSTEM);
        const start = await seeded(server, token);
        const target = from === "postgres" ? null : await emptyPgDatabase();
        if (target) dbs.push(target);
        dst = await openDb({ data_dir: testTempDir("assay-live-dst-"), database_url: target?.url ?? null });
        let started = 0;
        const outcome = await copyInstallation(
          src,
          writingFirst(dst, "submissions", async () => {
            expect((await start()).status).toBe(201);
            started++;
          }),
        );
        expect(started).toBe(1);
        expect(outcome.state).toBe("copied");
        // The target holds the source as it was when the copy began: three runs, each with its
        // submission; the source has the fourth.
        expect(await runsOf(dst)).toEqual({ runs: 3, orphans: 0 });
        expect(await runsOf(server.deps.db)).toEqual({ runs: 4, orphans: 0 });
      } finally {
        await dst?.close();
        await src.close();
        await server.stop();
      }
    }, 120_000);
});
