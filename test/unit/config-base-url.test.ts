// ASSAY_BASE_URL is the prefix of every public URL (Location, next, webhook bodies): one with a
// query, a fragment or a user and password made every such URL wrong, so it is refused at start
// with the other bad settings (exit 2), the password never repeated.
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";

const problems = (value: string): string[] => {
  try {
    loadConfig({ ASSAY_BASE_URL: value });
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
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
