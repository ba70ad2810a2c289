// PostgreSQL's insertEach writes k rows as one INSERT by repeating its VALUES tuple (src/db/postgres.ts).
import { describe, expect, test } from "bun:test";
import { repeatValues } from "../../../src/db/postgres.ts";

describe("repeatValues", () => {
  const one = "INSERT INTO t (a, b) VALUES (?, ?)";

  test("one row is the statement as written", () => {
    expect(repeatValues(one, 1)).toBe(one);
  });

  test("k rows repeat the tuple k times, placeholders and all", () => {
    expect(repeatValues(one, 3)).toBe("INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?)");
  });

  test("literals inside the tuple are repeated as they are", () => {
    expect(repeatValues("INSERT INTO t (a, n) values (?, 1)\n", 2)).toBe(
      "INSERT INTO t (a, n) values (?, 1), (?, 1)",
    );
  });

  test("a statement that does not end in one VALUES tuple is refused, not guessed at", () => {
    expect(() => repeatValues("INSERT INTO t (a) SELECT ?", 2)).toThrow(/one VALUES tuple/);
    expect(() => repeatValues("INSERT INTO t (a) VALUES (?) RETURNING id", 2)).toThrow(/one VALUES tuple/);
    expect(() => repeatValues("INSERT INTO t (a) VALUES (coalesce(?, 0))", 2)).toThrow(/one VALUES tuple/);
  });
});
