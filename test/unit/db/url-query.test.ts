// What a PostgreSQL URL's query may ask of Bun's client (src/db/url-query.ts): the values it reads
// and can use, the session settings it passes to the server, and the libpq options whose libpq
// default is what the client does anyway are accepted; the refusals are in test/cli-edges.test.ts.
import { expect, test } from "bun:test";
import { parseDatabaseUrl } from "../../../src/db/url.ts";
import {
  connectTimeoutOf,
  databaseUrlProblems,
  namesNoHost,
  severalHostsProblem,
} from "../../../src/db/url-query.ts";

const problems = (url: string) => databaseUrlProblems(parseDatabaseUrl(url)!);

test("the parameters the client reads, with values it takes, are accepted", () => {
  expect(
    problems(
      "postgres://u:pw@db/assay?sslmode=verify-full&sslrootcert=/ca.pem&connect_timeout=5&max_lifetime=0&port=5433&prepare=false&channel_binding=require&user=a&dbname=b&password=c&ssl=true",
    ),
  ).toEqual([]);
});

test("session settings go to the server (application_name, options, any setting's name); empty values are the default", () => {
  expect(
    problems(
      "postgres://db/assay?application_name=assay&options=-c%20search_path%3Dassay&search_path=assay&connect_timeout=&max=",
    ),
  ).toEqual([]);
});

test("libpq options asking only for what the client does anyway are accepted", () => {
  expect(
    problems(
      "postgres://db/a?target_session_attrs=any&load_balance_hosts=disable&gssencmode=prefer&sslnegotiation=postgres",
    ),
  ).toEqual([]);
});

test("libpq tuning options the client skips, which started before the check, are accepted: keepalives, TCP timeout, compression, a fallback name, a writable server", () => {
  // Refused from fe532ca on, they stopped a deployment that started before the upgrade.
  expect(
    problems(
      "postgres://db/a?keepalives=1&keepalives_idle=30&keepalives_interval=10&keepalives_count=3&tcp_user_timeout=10000&sslcompression=0&fallback_application_name=x&target_session_attrs=read-write&target_session_attrs=primary&load_balance_hosts=random",
    ),
  ).toEqual([]);
});

test("a URL naming no host is accepted; it names none unless a socket directory, a path or PGHOST is given", () => {
  expect(problems("postgres://u:pw@/assay")).toEqual([]);
  const noHost = (url: string, env: Record<string, string> = {}) => namesNoHost(parseDatabaseUrl(url), env);
  expect(noHost("postgres://u:pw@/assay")).toBe(true);
  expect(noHost("postgresql:///assay?host=")).toBe(true);
  expect(noHost("postgres://u:pw@/assay?host=/run/postgresql")).toBe(false);
  expect(noHost("postgresql:///assay?HOST=db")).toBe(false);
  expect(noHost("postgres:///assay?path=/run/postgresql/.s.PGSQL.5432")).toBe(false);
  expect(noHost("postgres:///assay", { PGHOST: "/run/postgresql" })).toBe(false);
  expect(noHost("postgres://db/assay")).toBe(false);
});

test("connect_timeout, in any case, is the client's connection timeout", () => {
  expect(connectTimeoutOf(parseDatabaseUrl("postgres://db/a?Connect_Timeout=3"))).toBe(3);
  expect(connectTimeoutOf(parseDatabaseUrl("postgres://db/a?connect_timeout="))).toBeNull();
  expect(connectTimeoutOf(parseDatabaseUrl("postgres://db/a"))).toBeNull();
});

test("one host is no list: a comma in the password, the path or another parameter is not a second host", () => {
  // The refusals (several hosts, in the URL or in ?host=) are in test/cli-edges.test.ts.
  for (const url of [
    "postgres://u:a,b@db/assay",
    "postgres://u:pw@[::1]:5433/assay",
    "postgres://u:pw@/assay?host=/run/postgresql&application_name=a,b",
    "postgresql:///a,b?options=-c%20search_path%3Da,b",
  ])
    expect([url, severalHostsProblem(url)]).toEqual([url, null]);
  expect(severalHostsProblem("postgres://u:a,b@db1,db2/x")).toStartWith(
    "the URL names several hosts (db1,db2): ",
  );
  expect(severalHostsProblem("postgres://db/x?HOST=a,b")).toStartWith("HOST=a,b names several hosts: ");
});

test("a password holding a comma and a raw / is no host list, and no part of it is echoed", () => {
  // The authority was read up to the first /: "u:s3cr,t" was called a host list, and printed.
  expect(severalHostsProblem("postgres://u:s3cr,t/x@db.example/assay")).toBeNull();
  expect(severalHostsProblem("postgres://u:s3,c/r@h1:5432,h2:5432/assay")).toStartWith(
    "the URL names several hosts (h1:5432,h2:5432): ",
  );
  // An @ in the path of a URL that parses is not the end of a user's password.
  expect(severalHostsProblem("postgres://h1,h2/my@db")).toStartWith("the URL names several hosts (h1,h2): ");
});

test("sslrootcert=system is accepted without sslmode, with verify-full, and with the modes Bun's client raises to verify-full", () => {
  // Bun's client reads it as libpq does (the system's CAs, verify-full); the modes it would not
  // check the host name under are refused (test/cli-edges.test.ts), the TLS itself in test/pg-tls.test.ts.
  for (const q of [
    "",
    "&sslmode=verify-full",
    "&sslmode=require",
    "&sslmode=prefer",
    "&ssl=true",
    "&sslmode=",
  ])
    expect([q, problems(`postgres://db/a?sslrootcert=system${q}`)]).toEqual([q, []]);
});
