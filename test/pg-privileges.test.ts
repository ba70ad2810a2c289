// PostgreSQL as an operations team hands it out: a role that is not a superuser and does not own
// the database, where `public` grants no CREATE (PostgreSQL 15+), perhaps a schema of its own,
// another application's tables beside Assay's, a Unix socket, a statement_timeout on the role.
// What it lacks is said in Assay's words with the statement that grants it (docs/postgres.md,
// "Roles and privileges"); with what those docs list, it works. PostgreSQL only.
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { testConfig } from "../src/config.ts";
import { MIGRATIONS, MIGRATION_LOCK } from "../src/db/migrate.ts";
import { SYSTEM } from "../src/audit/actor.ts";
import { holdSchema } from "../src/db/schema-hold.ts";
import { serversHolding } from "../src/db/serving-lock.ts";
import { createLogger } from "../src/lib/log.ts";
import { startServer } from "../src/server.ts";
import { emptyPgDatabase, onPostgres } from "./helpers/backend.ts";
import { runAssay } from "./helpers/cli.ts";
import { sharedPgCluster } from "./helpers/pg-cluster.ts";
import { call } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

/** `assay …` with no database in the environment: the command line says which. */
const assay = (...args: string[]) => runAssay(args, { env: { ASSAY_DATABASE_URL: "", ASSAY_DATA_DIR: "" } });

let seq = 0;
/** An empty database owned by the superuser, a client on it as the superuser, and a new login role. */
async function setUp() {
  const db = await emptyPgDatabase();
  const admin = new SQL({ url: db.url, max: 1 });
  const role = `assay_r${process.pid}_${++seq}`;
  await admin.unsafe(`CREATE ROLE ${role} LOGIN`);
  cleanups.push(db.drop, () => admin.close());
  const as = (r: string, query = "") => `${db.url.replace("postgres@", `${r}@`)}${query}`;
  const name = new URL(db.url).pathname.slice(1);
  const tables = async (schema: string) =>
    (
      (await admin.unsafe("SELECT tablename AS t FROM pg_tables WHERE schemaname = $1 ORDER BY 1", [
        schema,
      ])) as { t: string }[]
    ).map((r) => r.t);
  return { url: db.url, admin, role, as, name, tables };
}

describe.skipIf(!onPostgres)("PostgreSQL roles and privileges", () => {
  test("a role without CREATE on public is told which privilege to grant; serve and migrate exit 1, nothing created", async () => {
    const { as, role, name, tables, admin } = await setUp();
    const said = `the role "${role}" may not create tables in schema "public" of database "${name}" (PostgreSQL: permission denied for schema public); Assay creates its tables at the first start and on upgrades. Give it a schema of its own — CREATE SCHEMA assay AUTHORIZATION ${role}; ALTER ROLE ${role} SET search_path = assay — or the privilege on this one: GRANT CREATE ON SCHEMA public TO ${role} (docs/postgres.md, "Roles and privileges").\n`;
    expect(await assay("migrate", "--database-url", as(role))).toEqual({
      code: 1,
      out: "",
      err: `assay migrate: ${said}`,
    });
    expect(await assay("serve", "--port", "0", "--database-url", as(role))).toEqual({
      code: 1,
      out: "",
      err: `assay serve: ${said}`,
    });
    expect(await tables("public")).toEqual([]);
    // The grant the message names is enough.
    await admin.unsafe(`GRANT CREATE ON SCHEMA public TO ${role}`);
    const r = await assay("migrate", "--database-url", as(role));
    expect(r.code).toBe(0);
    expect(await tables("public")).toContain("assay_schema_migrations");
  }, 90_000);

  test("a search_path naming no schema that exists is said so", async () => {
    const { as, role, name } = await setUp();
    const url = as(role, "?options=-c%20search_path%3Dassay_nope");
    expect(await assay("migrate", "--database-url", url)).toEqual({
      code: 1,
      out: "",
      err: `assay migrate: the role "${role}" has no schema to create Assay's tables in, in database "${name}": no schema of its search_path (assay_nope) exists (PostgreSQL: no schema has been selected to create in). Create one it owns — CREATE SCHEMA assay AUTHORIZATION ${role}; ALTER ROLE ${role} SET search_path = assay — or correct the search_path (docs/postgres.md, "Roles and privileges").\n`,
    });
  }, 90_000);

  test("another application's users table in public: refused by name, its table untouched, nothing created", async () => {
    const { url, admin, name, tables } = await setUp();
    await admin.unsafe("CREATE TABLE users (id serial PRIMARY KEY, email text)");
    await admin.unsafe("INSERT INTO users (email) VALUES ('a@example.com')");
    expect(await assay("migrate", "--database-url", url)).toEqual({
      code: 1,
      out: "",
      err: `assay migrate: schema "public" of database "${name}" holds another application's tables by the names of Assay's (users); nothing was changed. Give Assay an empty database or a schema of its own: CREATE SCHEMA assay AUTHORIZATION postgres; ALTER ROLE postgres SET search_path = assay (docs/postgres.md, "Roles and privileges").\n`,
    });
    expect(await tables("public")).toEqual(["users"]);
    expect(await admin.unsafe("SELECT email FROM users")).toEqual([{ email: "a@example.com" }]);
  }, 90_000);

  test("a schema of its own (owner migrates), served by a role with only USAGE and SELECT/INSERT/UPDATE/DELETE", async () => {
    const { as, admin, role, tables } = await setUp();
    const app = `${role}_app`;
    await admin.unsafe(`CREATE ROLE ${app} LOGIN`);
    await admin.unsafe(`CREATE SCHEMA assay AUTHORIZATION ${role}`);
    // Another application's users table in public stays out of the way.
    await admin.unsafe("CREATE TABLE public.users (id serial PRIMARY KEY, email text)");
    const ownerUrl = as(role, "?options=-c%20search_path%3Dassay");
    const m = await assay("migrate", "--database-url", ownerUrl);
    expect(m.code).toBe(0);
    expect(m.out).toEndWith(`?options=***: schema 0 → ${MIGRATIONS.at(-1)?.version}.\n`);
    expect(await tables("public")).toEqual(["users"]);
    expect(await tables("assay")).toContain("runs");
    await admin.unsafe(`GRANT USAGE ON SCHEMA assay TO ${app}`);
    await admin.unsafe(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA assay TO ${app}`);
    await admin.unsafe(`ALTER ROLE ${app} SET search_path = assay`);
    const server = await startServer(
      testConfig({
        port: 0,
        log_level: "silent",
        workers: 1,
        rate_limit_disabled: true,
        data_dir: testTempDir("assay-pgpriv-"),
        database_url: as(app),
      }),
    );
    cleanups.push(() => server.stop());
    const d = server.deps;
    const u = await d.users.create({ username: "root", is_admin: true }, SYSTEM);
    const org = await d.orgs.create("acme", "ACME", SYSTEM);
    await d.orgs.addMember(org.id, u.id, "admin", SYSTEM);
    const { token } = await d.tokens.create(u.id, "t", null, SYSTEM);
    const wf = await call(server, "POST", "/api/v1/orgs/acme/workflows/", {
      token,
      body: {
        slug: "orders",
        name: "Orders",
        allowed_file_types: ["JSON"],
        steps: [
          { name: "s", validator: "json_schema", config: { schema: { type: "object", required: ["id"] } } },
        ],
      },
    });
    expect(wf.status).toBe(201);
    const run = await call(server, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", { token, body: {} });
    expect(run.status).toBe(201);
    expect(run.json.status).toBe("failed");
    const again = await call(server, "GET", `/api/v1/orgs/acme/runs/${run.json.id}/`, { token });
    expect(again.json).toEqual(run.json);
  }, 90_000);

  test("a serving role whose search_path misses Assay's schema is told to set it, by serve, migrate and a command (not to create the tables, nor that there is no installation)", async () => {
    const { as, admin, role, name } = await setUp();
    const app = `${role}_app`;
    await admin.unsafe(`CREATE ROLE ${app} LOGIN`);
    await admin.unsafe(`CREATE SCHEMA assay AUTHORIZATION ${role}`);
    expect(
      (await assay("migrate", "--database-url", as(role, "?options=-c%20search_path%3Dassay"))).code,
    ).toBe(0);
    // docs/postgres.md's grants, without the search_path line.
    await admin.unsafe(`GRANT USAGE ON SCHEMA assay TO ${app}`);
    await admin.unsafe(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA assay TO ${app}`);
    const said = `the role "${app}" finds no Assay tables in its search_path ("$user", public) of database "${name}", but schema "assay" holds them`;
    const fix = `Set the role's search_path to it — ALTER ROLE ${app} SET search_path = assay, or ?options=-c%20search_path%3Dassay in the URL (docs/postgres.md, "Roles and privileges").\n`;
    for (const command of ["serve", "migrate"])
      expect(
        await assay(command, ...(command === "serve" ? ["--port", "0"] : []), "--database-url", as(app)),
      ).toEqual({
        code: 1,
        out: "",
        err: `assay ${command}: ${said} (PostgreSQL: permission denied for schema public). ${fix}`,
      });
    expect(await assay("users", "list", "--database-url", as(app))).toEqual({
      code: 1,
      out: "",
      err: `assay users: No Assay installation reachable in PostgreSQL ${as(app).replace(/:[^:@/]*@/, ":***@")}: ${said}. ${fix}`,
    });
    // What the message says is enough.
    await admin.unsafe(`ALTER ROLE ${app} SET search_path = assay`);
    expect(await assay("users", "list", "--database-url", as(app))).toMatchObject({ code: 0, err: "" });
  }, 90_000);

  test("a serving role without its privileges on one of Assay's tables is told the GRANT, by serve and every command", async () => {
    const { as, admin, role, name } = await setUp();
    const app = `${role}_app`;
    await admin.unsafe(`CREATE ROLE ${app} LOGIN`);
    await admin.unsafe(`CREATE SCHEMA assay AUTHORIZATION ${role}`);
    expect(
      (await assay("migrate", "--database-url", as(role, "?options=-c%20search_path%3Dassay"))).code,
    ).toBe(0);
    await admin.unsafe(`GRANT USAGE ON SCHEMA assay TO ${app}`);
    await admin.unsafe(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA assay TO ${app}`);
    await admin.unsafe(`ALTER ROLE ${app} SET search_path = assay`);
    // As after an upgrade that added a table, without ALTER DEFAULT PRIVILEGES: it was
    // "assay serve: permission denied for table content_chunks", naming neither role nor schema.
    await admin.unsafe(`REVOKE DELETE ON assay.content_chunks FROM ${app}`);
    await admin.unsafe(`REVOKE ALL ON assay.webhooks FROM ${app}`);
    const said = `the role "${app}" lacks SELECT, INSERT, UPDATE or DELETE on 2 of Assay's tables in schema "assay" of database "${name}" (content_chunks, webhooks). Grant them: GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA assay TO ${app} (docs/postgres.md, "Roles and privileges").\n`;
    expect(await assay("serve", "--port", "0", "--database-url", as(app))).toEqual({
      code: 1,
      out: "",
      err: `assay serve: ${said}`,
    });
    expect(await assay("users", "create", "bob", "--database-url", as(app))).toEqual({
      code: 1,
      out: "",
      err: `assay users: ${said}`,
    });
    // A command that only reads needs SELECT alone: it names the one table it may not read.
    expect(await assay("users", "list", "--database-url", as(app))).toEqual({
      code: 1,
      out: "",
      err: `assay users: the role "${app}" lacks SELECT on 1 of Assay's tables in schema "assay" of database "${name}" (webhooks). Grant it: GRANT SELECT ON ALL TABLES IN SCHEMA assay TO ${app} (docs/postgres.md, "Roles and privileges").\n`,
    });
    await admin.unsafe(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA assay TO ${app}`);
    expect(await assay("users", "create", "bob", "--database-url", as(app))).toMatchObject({
      code: 0,
      err: "",
    });
  }, 90_000);

  test("a role with SELECT alone runs the commands that only read; one that writes is told the GRANT for what is missing", async () => {
    const { as, admin, role, name } = await setUp();
    const reader = `${role}_reader`;
    await admin.unsafe(`CREATE ROLE ${reader} LOGIN`);
    await admin.unsafe(`CREATE SCHEMA assay AUTHORIZATION ${role}`);
    const owner = as(role, "?options=-c%20search_path%3Dassay");
    expect((await assay("init", "--org", "acme", "--admin", "root", "--database-url", owner)).code).toBe(0);
    const file = join(testTempDir("assay-reader-"), "orders.json");
    writeFileSync(
      file,
      JSON.stringify({
        slug: "orders",
        name: "Orders",
        allowed_file_types: ["JSON"],
        steps: [{ name: "s", validator: "syntax" }],
      }),
    );
    expect((await assay("workflows", "import", "acme", file, "--database-url", owner)).code).toBe(0);
    await admin.unsafe(`GRANT USAGE ON SCHEMA assay TO ${reader}`);
    await admin.unsafe(`GRANT SELECT ON ALL TABLES IN SCHEMA assay TO ${reader}`);
    await admin.unsafe(`ALTER ROLE ${reader} SET search_path = assay`);
    const url = as(reader);
    // Every command that only reads (until 2026-11-29 each was refused: all four were checked).
    const reads: [string[], RegExp][] = [
      [["users", "list"], /^ID +USERNAME.*\n1 +root /],
      [["orgs", "list"], /^SLUG .*\nacme /],
      [["members", "list", "acme"], /^USERNAME +ROLE.*\nroot +admin /],
      [["tokens", "list", "root"], /^ID +NAME.*\n1 +/],
      [["settings", "get"], /^token_default_ttl_days = null\n/],
      [["settings"], /^token_default_ttl_days = null\n/],
      [["audit", "verify"], /^Intact: \d+ entries/],
      [["audit", "head"], /^\{"seq":\d+,/],
      [["workflows", "export", "acme", "orders"], /^kind: assay\/workflow\n(.*\n)*slug: orders\n/],
    ];
    for (const [args, out] of reads) {
      const r = await assay(...args, "--database-url", url);
      expect([args.join(" "), r.code, r.err]).toEqual([args.join(" "), 0, ""]);
      expect(r.out).toMatch(out);
    }
    // Assay's tables (its migrations' history is not among those checked), as PostgreSQL sorts them.
    const tables = (
      (await admin.unsafe(
        "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'assay' AND tablename <> 'assay_schema_migrations' ORDER BY tablename",
      )) as { t: string }[]
    ).map((r) => r.t);
    const said = (command: string) =>
      `assay ${command}: the role "${reader}" lacks INSERT, UPDATE or DELETE on ${tables.length} of Assay's tables in schema "assay" of database "${name}" (${tables.slice(0, 5).join(", ")}, …). Grant them: GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA assay TO ${reader} (docs/postgres.md, "Roles and privileges").\n`;
    for (const args of [
      ["users", "create", "bob"],
      ["orgs", "create", "beta"],
      ["members", "remove", "acme", "root"],
      ["tokens", "revoke", "1"],
      ["settings", "set", "token_default_ttl_days", "30"],
      ["workflows", "import", "acme", file],
      ["serve", "--port", "0"],
    ])
      expect(await assay(...args, "--database-url", url)).toEqual({ code: 1, out: "", err: said(args[0]!) });
    // A table it may not even read is named with SELECT alone, for a command that reads.
    await admin.unsafe(`REVOKE SELECT ON assay.webhooks FROM ${reader}`);
    expect(await assay("users", "list", "--database-url", url)).toEqual({
      code: 1,
      out: "",
      err: `assay users: the role "${reader}" lacks SELECT on 1 of Assay's tables in schema "assay" of database "${name}" (webhooks). Grant it: GRANT SELECT ON ALL TABLES IN SCHEMA assay TO ${reader} (docs/postgres.md, "Roles and privileges").\n`,
    });
  }, 120_000);

  test("a role without ownership of Assay's tables is told to migrate as their owner", async () => {
    const { url, as, admin, role, name } = await setUp();
    // Migrated by the owner up to one migration before this build's.
    await admin.unsafe(
      "CREATE TABLE assay_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL, additive INTEGER NOT NULL DEFAULT 0)",
    );
    for (const m of MIGRATIONS.slice(0, -1)) {
      await admin.unsafe(m.postgres);
      await admin.unsafe("INSERT INTO assay_schema_migrations VALUES ($1, $2, 'before', $3)", [
        m.version,
        m.name,
        m.additive ? 1 : 0,
      ]);
    }
    await admin.unsafe(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
    expect(await assay("serve", "--port", "0", "--database-url", as(role))).toEqual({
      code: 1,
      out: "",
      err: `assay serve: the role "${role}" does not own Assay's tables in schema "public" of database "${name}", and this build must upgrade them (PostgreSQL: permission denied for schema public). Run "assay migrate" once as the role that owns them, then start the server again (docs/postgres.md, "Roles and privileges").\n`,
    });
    expect((await assay("migrate", "--database-url", url)).code).toBe(0);
  }, 90_000);

  test("the role's statement_timeout does not cancel a migration waiting for another node's", async () => {
    const { url, as, admin, role } = await setUp();
    await admin.unsafe(`GRANT CREATE ON SCHEMA public TO ${role}`);
    await admin.unsafe(`ALTER ROLE ${role} SET statement_timeout = '100ms'`);
    // Another node migrating: the migration lock held.
    const other = new SQL({ url, max: 1 });
    await other.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    let done = false;
    const migrating = assay("migrate", "--database-url", as(role)).finally(() => {
      done = true;
    });
    // Waiting on it for ten times the timeout (a canceled wait ends the command first).
    for (;;) {
      const [w] = (await admin.unsafe(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND wait_event_type = 'Lock'
           AND now() - query_start > interval '1 second'`,
        [role],
      )) as { n: number }[];
      if (w?.n || done) break;
      await Bun.sleep(50);
    }
    await other.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
    await other.close();
    expect(await migrating).toMatchObject({ code: 0, err: "" });
  }, 90_000);

  test("a Unix-socket URL without a host (postgres://user:pw@/db?host=DIR) is accepted and shown without its password", async () => {
    const { url } = await setUp();
    const cluster = await sharedPgCluster();
    const name = new URL(url).pathname.slice(1);
    const socket = `postgres://postgres:sekrit9@/${name}?host=${cluster.dir}&port=${cluster.port}`;
    const r = await assay("migrate", "--database-url", socket);
    expect(r).toEqual({
      code: 0,
      out: `PostgreSQL postgres://postgres:***@/${name}?host=${cluster.dir}&port=${cluster.port}: schema 0 → ${MIGRATIONS.at(-1)?.version}.\n`,
      err: "",
    });
  }, 90_000);

  test("the libpq parameters Bun's client takes serve: application_name names every session, connect_timeout, the tuning options it skips", async () => {
    const { url, admin } = await setUp();
    const app = `assay-app-${process.pid}-${seq}`;
    // The tuning options served before the URL's check (fe532ca refused them, exit 2): an upgrade
    // must start with the same URL. Through the CLI, where the check is.
    const query = `application_name=${app}&connect_timeout=5&target_session_attrs=read-write&keepalives=1&keepalives_idle=30&tcp_user_timeout=10000&sslcompression=0&fallback_application_name=x`;
    const shown = `application_name=${app}&connect_timeout=5&target_session_attrs=read-write&keepalives=***&keepalives_idle=***&tcp_user_timeout=***&sslcompression=***&fallback_application_name=***`;
    expect(await assay("migrate", "--database-url", `${url}?${query}`)).toEqual({
      code: 0,
      out: `PostgreSQL ${url}?${shown}: schema 0 → ${MIGRATIONS.at(-1)?.version}.\n`,
      err: "",
    });
    // A URL naming no host: Bun's client connects to localhost over TCP, where this cluster listens
    // (fe532ca refused it at start, exit 2, though it served before).
    const u = new URL(url);
    const hostless = `postgres://${u.username}@${u.pathname}?port=${u.port}`;
    expect(await assay("migrate", "--database-url", hostless)).toEqual({
      code: 0,
      out: `PostgreSQL ${hostless}: schema ${MIGRATIONS.at(-1)?.version}, up to date.\n`,
      err: "",
    });
    const server = await startServer(
      testConfig({
        port: 0,
        log_level: "silent",
        workers: 1,
        data_dir: testTempDir("assay-pgpriv-"),
        database_url: `${url}?${query}`,
        database_pool_size: 2,
      }),
    );
    cleanups.push(() => server.stop());
    expect((await call(server, "GET", "/readyz")).status).toBe(200);
    const [row] = (await admin.unsafe(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1",
      [app],
    )) as { n: number }[];
    // The pool's two and the server's own two (its schema hold, its LISTEN).
    expect(row?.n).toBe(4);
  }, 90_000);

  test("connections used up (max_connections, a CONNECTION LIMIT): serve says how many it opens and what to change", async () => {
    const { as, admin, role, name } = await setUp();
    await admin.unsafe(`ALTER DATABASE ${name} OWNER TO ${role}`);
    await admin.unsafe(`ALTER ROLE ${role} CONNECTION LIMIT 4`);
    const r = await runAssay(["serve", "--port", "0", "--database-url", as(role)], {
      env: { ASSAY_DATABASE_URL: "", ASSAY_DATA_DIR: "", ASSAY_DATABASE_POOL_SIZE: "" },
    });
    const lines = r.err.trim().split("\n");
    expect(r.code).toBe(1);
    expect(lines.at(-1)).toBe(
      `assay serve: PostgreSQL ${as(role)} refused a connection (too many connections for role "${role}"). Each server opens ASSAY_DATABASE_POOL_SIZE (20) connections at its start, plus 2 of its own: lower ASSAY_DATABASE_POOL_SIZE, or raise max_connections (or the role's CONNECTION LIMIT) (docs/postgres.md, "Sizing").`,
    );
    // Within the limit: the pool and the server's own two.
    const server = await startServer(
      testConfig({
        port: 0,
        log_level: "silent",
        workers: 1,
        data_dir: testTempDir("assay-pgpriv-"),
        database_url: as(role),
        database_pool_size: 2,
      }),
    );
    cleanups.push(() => server.stop());
    expect((await call(server, "GET", "/readyz")).status).toBe(200);
  }, 90_000);

  test("a role's idle_session_timeout does not end the schema hold's session (idle by design)", async () => {
    const { url, as, admin, role } = await setUp();
    expect((await assay("migrate", "--database-url", url)).code).toBe(0);
    await admin.unsafe(`GRANT SELECT ON assay_schema_migrations TO ${role}`);
    await admin.unsafe(`ALTER ROLE ${role} SET idle_session_timeout = '200ms'`);
    const hold = await holdSchema(as(role), createLogger("silent"));
    cleanups.push(() => hold.stop());
    // Idle for five times the timeout, still holding; a session the timeout ended drops the lock.
    for (;;) {
      const [s] = (await admin.unsafe(
        `SELECT count(*) FILTER (WHERE state = 'idle' AND now() - state_change > interval '1 second')::int AS idle
           FROM pg_stat_activity WHERE usename = $1`,
        [role],
      )) as { idle: number }[];
      if (s?.idle) break;
      if ((await serversHolding(admin)) === 0) break;
      await Bun.sleep(50);
    }
    expect(await serversHolding(admin)).toBe(1);
  }, 90_000);

  test("a statement_timeout too short for the server's start is named, with what to change", async () => {
    const { url, as, admin, role, name } = await setUp();
    await admin.unsafe(`ALTER DATABASE ${name} OWNER TO ${role}`);
    expect((await assay("migrate", "--database-url", as(role))).code).toBe(0);
    await admin.unsafe(`ALTER ROLE ${role} SET statement_timeout = '200ms'`);
    // A table the start reads, locked meanwhile: its statement waits, and the timeout ends it.
    const locker = new SQL({ url, max: 1 });
    cleanups.push(() => locker.close());
    const r = await locker.begin(async (tx) => {
      await tx.unsafe("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE");
      return runAssay(["serve", "--port", "0", "--database-url", as(role)], {
        env: { ASSAY_DATABASE_URL: "", ASSAY_DATA_DIR: "" },
      });
    });
    expect(r.code).toBe(1);
    expect(r.err.trim().split("\n").at(-1)).toBe(
      `assay serve: PostgreSQL ${as(role)} canceled a statement of the server's start (57014: the role's statement_timeout, or an administrator's cancel). Raise the role's statement_timeout or set it to 0 for Assay's role: ALTER ROLE … SET statement_timeout = 0 (docs/postgres.md, "Roles and privileges").`,
    );
  }, 90_000);
});
