// TLS to PostgreSQL as the URL's sslmode asks (docs/postgres.md): on a cluster of this test's own
// with a self-signed certificate made by openssl. A failure names the server (password as ***)
// and what to change, not only the client's words ("self signed certificate"). PostgreSQL only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { selfSignedCertificate } from "./helpers/certificate.ts";
import { SQL } from "bun";
import { chownSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { onPostgres } from "./helpers/backend.ts";
import { runAssay } from "./helpers/cli.ts";
import { type PgCluster, startPgCluster } from "./helpers/pg-cluster.ts";

let cluster: PgCluster;
const ca = () => join(cluster.dir, "ca.crt");
const url = (host: string, query: string) =>
  `postgres://postgres:sekrit9@${host}:${cluster.port}/postgres?${query}`;
const shown = (host: string, query: string) => url(host, query).replace("sekrit9", "***");
const migrate = (u: string, env: Record<string, string> = {}) => assay("migrate", u, env);
const assay = (command: string, u: string, env: Record<string, string> = {}) =>
  runAssay([...command.split(" "), "--database-url", u], {
    env: { ASSAY_DATABASE_URL: "", ASSAY_DATA_DIR: "", ...env },
  });

beforeAll(async () => {
  if (!onPostgres) return;
  cluster = await startPgCluster();
  const data = join(cluster.dir, "data");
  selfSignedCertificate(join(data, "server.crt"), join(data, "server.key"));
  writeFileSync(ca(), await Bun.file(join(data, "server.crt")).text());
  if (process.getuid?.() === 0) {
    const uid = Number(Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim());
    const gid = Number(Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim());
    for (const f of ["server.key", "server.crt"]) chownSync(join(data, f), uid, gid);
  }
}, 60_000);
afterAll(() => cluster?.stop());

describe.skipIf(!onPostgres)("TLS to PostgreSQL", () => {
  test("sslmode=require against a server without TLS names the server and what to change", async () => {
    expect(await migrate(url("127.0.0.1", "sslmode=require"))).toEqual({
      code: 1,
      out: "",
      err: `assay migrate: PostgreSQL ${shown("127.0.0.1", "sslmode=require")} does not offer TLS, which sslmode=require requires: turn ssl on in the server, or connect with sslmode=disable where the network allows it (docs/postgres.md).\n`,
    });
  }, 60_000);

  // The commands that open the database without migrating it said "cannot reach …: database
  // unavailable (ERR_POSTGRES_TLS_NOT_AVAILABLE)" where `migrate` and `serve` said what to change.
  test("an admin command says the same as migrate when TLS is not offered", async () => {
    for (const command of ["users list", "audit verify"])
      expect(await assay(command, url("127.0.0.1", "sslmode=require"))).toEqual({
        code: 1,
        out: "",
        err: `assay ${command.split(" ")[0]}: PostgreSQL ${shown("127.0.0.1", "sslmode=require")} does not offer TLS, which sslmode=require requires: turn ssl on in the server, or connect with sslmode=disable where the network allows it (docs/postgres.md).\n`,
      });
  }, 60_000);

  test("with ssl on: require and verify-full with its CA connect; an unchecked certificate and an unreadable CA file are said so", async () => {
    const admin = new SQL({ url: `${cluster.baseUrl}postgres`, max: 1 });
    await admin.unsafe("ALTER SYSTEM SET ssl = on");
    await admin.unsafe("SELECT pg_reload_conf()");
    // Reloaded: a new session sees it.
    for (;;) {
      const s = new SQL({ url: `${cluster.baseUrl}postgres`, max: 1 });
      const [row] = (await s.unsafe("SHOW ssl")) as { ssl: string }[];
      await s.close();
      if (row?.ssl === "on") break;
    }
    await admin.close();
    for (const q of ["sslmode=require", "sslmode=disable", `sslmode=verify-full&sslrootcert=${ca()}`]) {
      const r = await migrate(url("localhost", q));
      expect(r).toMatchObject({ code: 0, err: "" });
      expect(r.out).toStartWith(`PostgreSQL ${shown("localhost", q)}: schema `);
    }
    expect(await migrate(url("localhost", "sslmode=verify-full"))).toEqual({
      code: 1,
      out: "",
      err: `assay migrate: PostgreSQL ${shown("localhost", "sslmode=verify-full")}: its TLS certificate was refused (self signed certificate). sslmode=verify-full and verify-ca check it against the CA file given as sslrootcert=FILE (else the system's CAs), verify-full also its host name; sslmode=require encrypts without checking it (docs/postgres.md).\n`,
    });
    expect(await assay("users list", url("localhost", "sslmode=verify-full"))).toEqual({
      code: 1,
      out: "",
      err: `assay users: PostgreSQL ${shown("localhost", "sslmode=verify-full")}: its TLS certificate was refused (self signed certificate). sslmode=verify-full and verify-ca check it against the CA file given as sslrootcert=FILE (else the system's CAs), verify-full also its host name; sslmode=require encrypts without checking it (docs/postgres.md).\n`,
    });
    const missing = join(cluster.dir, "no-such-ca.crt");
    const q = `sslmode=verify-full&sslrootcert=${missing}`;
    expect(await migrate(url("localhost", q))).toEqual({
      code: 1,
      out: "",
      err: `assay migrate: PostgreSQL ${shown("localhost", q)}: sslrootcert=${missing} cannot be read as a CA certificate (Unable to access caFile path): give a readable PEM file (docs/postgres.md).\n`,
    });
  }, 60_000);

  // libpq reads sslrootcert=system as the SSL library's trusted roots with verify-full; Bun's client
  // (1.4.5) does the same: the default store (Bun's roots and the system's, OpenSSL's default file
  // or SSL_CERT_FILE), the host name checked. Here the system's CA file is the test's own CA.
  // Runs after the test above, which turned ssl on.
  test("sslrootcert=system checks the certificate against the system's CAs; refused, the message says where they come from", async () => {
    for (const q of ["sslrootcert=system", "sslmode=verify-full&sslrootcert=system"]) {
      const r = await migrate(url("localhost", q), { SSL_CERT_FILE: ca() });
      expect([q, r.code, r.err]).toEqual([q, 0, ""]);
      expect(r.out).toStartWith(`PostgreSQL ${shown("localhost", q)}: schema `);
    }
    expect(await migrate(url("localhost", "sslrootcert=system"))).toEqual({
      code: 1,
      out: "",
      err: `assay migrate: PostgreSQL ${shown("localhost", "sslrootcert=system")}: its TLS certificate was refused (self signed certificate). sslrootcert=system checks it against the system's CAs (OpenSSL's default CA file, or the one SSL_CERT_FILE names, and Bun's own) and its host name, as sslmode=verify-full does; give the CA's file as sslrootcert=FILE instead, or leave sslrootcert out and set sslmode=require to encrypt without checking it (docs/postgres.md).\n`,
    });
  }, 60_000);
});
