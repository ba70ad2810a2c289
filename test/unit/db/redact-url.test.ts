// A database URL in logs and messages: the password masked wherever the URL carries it — in the
// userinfo or in the query (`?password=`, which Bun's client and libpq both read), and any query
// value not known to be harmless, since the names that carry secrets are not a closed list.
import { expect, test } from "bun:test";
import { describeDb, redactUrl } from "../../../src/db/open.ts";

test("the userinfo password is masked, the user kept", () => {
  expect(redactUrl("postgres://assay:secret@db.example:5432/assay")).toBe(
    "postgres://assay:***@db.example:5432/assay",
  );
});

test("a password in the query is masked, with or without a user there", () => {
  expect(redactUrl("postgres://alice@127.0.0.1:1/assay?password=sekrit9")).toBe(
    "postgres://alice@127.0.0.1:1/assay?password=***",
  );
  expect(redactUrl("postgres://127.0.0.1:1/assay?user=bob&password=sekrit9")).toBe(
    "postgres://127.0.0.1:1/assay?user=bob&password=***",
  );
  expect(redactUrl("postgres://h/db?PassWord=sekrit9")).toBe("postgres://h/db?PassWord=***");
});

test("other secret-bearing and unknown query values are masked, harmless ones kept", () => {
  expect(
    redactUrl(
      "postgres://a:b@h/db?sslmode=verify-full&sslpassword=k1&sslkey=%2Fk.pem&passfile=%2Fp&application_name=assay&x=y",
    ),
  ).toBe(
    "postgres://a:***@h/db?sslmode=verify-full&sslpassword=***&sslkey=***&passfile=***&application_name=assay&x=***",
  );
  expect(redactUrl("postgres://h/db?sslmode=require")).toBe("postgres://h/db?sslmode=require");
});

test("the start banner's description carries the masked URL", () => {
  expect(describeDb({ data_dir: "./d", database_url: "postgres://h/db?password=sekrit9" })).toBe(
    "PostgreSQL postgres://h/db?password=***",
  );
});

test("a Unix-socket URL (userinfo, no host) keeps its form, the password masked", () => {
  expect(redactUrl("postgres://assay:sekrit9@/assay?host=/run/postgresql&port=5433")).toBe(
    "postgres://assay:***@/assay?host=/run/postgresql&port=5433",
  );
  expect(redactUrl("postgresql://assay@/assay?host=%2Frun%2Fpostgresql&password=sekrit9")).toBe(
    "postgresql://assay@/assay?host=%2Frun%2Fpostgresql&password=***",
  );
});
