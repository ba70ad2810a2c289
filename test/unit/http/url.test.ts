// publicOrigin keeps the last origin it parsed: it must still follow the request's own scheme and
// authority, normalized as URL would, whatever came before.
import { describe, expect, test } from "bun:test";
import { publicOrigin } from "../../../src/http/url.ts";

const req = (url: string) => new Request(url);

describe("publicOrigin", () => {
  test("follows each request's scheme and authority, one after another", () => {
    const seen = [
      "http://a.example:8080/api/v1/orgs/",
      "http://a.example:8080/api/v1/orgs/acme/runs/?page=2",
      "http://b.example:8080/api/v1/orgs/",
      "https://b.example/x",
      "http://a.example:8080/y",
    ].map((u) => publicOrigin(null, req(u)));
    expect(seen).toEqual([
      "http://a.example:8080",
      "http://a.example:8080",
      "http://b.example:8080",
      "https://b.example",
      "http://a.example:8080",
    ]);
  });

  test("normalizes as URL does (case, default port), and a base URL wins", () => {
    expect(publicOrigin(null, req("http://A.Example:80/p"))).toBe("http://a.example");
    expect(publicOrigin(null, req("http://a.example/p"))).toBe("http://a.example");
    expect(publicOrigin("https://assay.example", req("http://a.example/p"))).toBe("https://assay.example");
  });
});
