// ASSAY_BASE_URL is the prefix of every public URL (Location, next, webhook bodies): one with a
// query, a fragment or a user and password made every such URL wrong, so it is refused at start
// with the other bad settings (exit 2), the password never repeated.
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";

const problems = (value: string): string[] => {
  try {
    loadConfig({ ASSAY_BASE_URL: value });
  } catch (e) {
    // Named after the variable (src/config.ts); the rest is the base URL's own problem.
    if (e instanceof ConfigError) return e.problems.map((p) => p.replace(/^ASSAY_BASE_URL: /, ""));
    throw e;
  }
  return [];
};

describe("ASSAY_BASE_URL", () => {
  test("an origin, or one with a path, is kept without its trailing slashes", () => {
    expect(loadConfig({ ASSAY_BASE_URL: "https://assay.example.com/" }).base_url).toBe(
      "https://assay.example.com",
    );
    expect(loadConfig({ ASSAY_BASE_URL: "http://10.0.0.1:8080/assay//" }).base_url).toBe(
      "http://10.0.0.1:8080/assay",
    );
  });

  test("a query or a fragment, even empty, is refused", () => {
    for (const value of [
      "https://assay.example.com/?x=1",
      "https://assay.example.com?",
      "https://assay.example.com/#top",
      "https://assay.example.com/#",
    ])
      expect(problems(value)).toEqual([
        `base URL "${value}" must not have a query (?…) or fragment (#…): paths are appended to it`,
      ]);
  });

  test("a user name or password is refused without repeating it", () => {
    for (const value of ["https://user:pw@assay.example.com", "https://user@assay.example.com/"])
      expect(problems(value)).toEqual([
        "base URL must not carry a user name or password (https://host[:port][/path])",
      ]);
  });

  test("another scheme, or no URL at all, is refused as before", () => {
    expect(problems("ftp://assay.example.com")).toEqual([
      'base URL "ftp://assay.example.com" is not an http(s) URL',
    ]);
    expect(problems("assay.example.com")).toEqual(['base URL "assay.example.com" is not an http(s) URL']);
  });
});

describe("every configuration problem names its flag or variable", () => {
  const problems = (env: Record<string, string>, flags: Record<string, string> = {}) => {
    try {
      loadConfig(env, flags);
      return [];
    } catch (e) {
      return (e as ConfigError).problems;
    }
  };
  test("the variable, or the flag when the flag gave the value", () => {
    expect(problems({ ASSAY_LOG_LEVEL: "loud" })).toEqual([
      "ASSAY_LOG_LEVEL: log level must be one of debug, info, warn, error, silent",
    ]);
    expect(problems({}, { log_level: "loud" })).toEqual([
      "--log-level: log level must be one of debug, info, warn, error, silent",
    ]);
    expect(problems({ ASSAY_BASE_URL: "ftp://x" })).toEqual([
      'ASSAY_BASE_URL: base URL "ftp://x" is not an http(s) URL',
    ]);
    expect(problems({ ASSAY_WEBHOOK_RETRY_DELAYS_MS: "soon" })).toEqual([
      "ASSAY_WEBHOOK_RETRY_DELAYS_MS: webhook retry delays must be up to 50 comma-separated integers (ms)",
    ]);
    expect(problems({ ASSAY_NODE_ID: "a b" })).toEqual([
      "ASSAY_NODE_ID: node id must be 1 to 64 letters, digits, dots, dashes or underscores",
    ]);
    expect(problems({ ASSAY_DATABASE_URL: "mysql://x" })).toEqual([
      "ASSAY_DATABASE_URL: database URL must start with postgres:// (or be absent for SQLite in the data dir)",
    ]);
  });
});
