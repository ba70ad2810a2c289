// `next` and `previous` keep the request's other query parameters as the client wrote them (CONTRACT
// §3): they were rebuilt through URLSearchParams, which decodes and re-encodes every one, so a
// parameter that is not UTF-8 (`x=%FF`, ignored by the route) came back as `x=%EF%BF%BD`, and
// `a%20b` as `a+b`. Only `page` and `page_size` are written by the server.
import { expect, test } from "bun:test";
import { envelope } from "../../../src/http/pagination.ts";

const page = (n: number, size: number) => ({ page: n, pageSize: size, limit: size, offset: (n - 1) * size });
const links = (url: string, n = 2, size = 1) => {
  const e = envelope(url, page(n, size), 10, []);
  return [e.previous, e.next];
};

test.each([
  ["x=%FF&page_size=1&page=2", "x=%FF&page_size=1&page=1", "x=%FF&page_size=1&page=3"],
  [
    "q=a%20b&r=%E2%80%AE&page_size=1",
    "q=a%20b&r=%E2%80%AE&page_size=1&page=1",
    "q=a%20b&r=%E2%80%AE&page_size=1&page=3",
  ],
  ["%FF=1&page_size=1&page=2", "%FF=1&page_size=1&page=1", "%FF=1&page_size=1&page=3"],
  ["page_size=1&page=2&x=1", "page_size=1&page=1&x=1", "page_size=1&page=3&x=1"],
  ["pa%67e=2&page_size=1", "page=1&page_size=1", "page=3&page_size=1"],
])("?%s: previous ?%s, next ?%s", (query, previous, next) => {
  const base = "https://assay.example/api/v1/orgs/acme/workflows/";
  expect(links(`${base}?${query}`)).toEqual([`${base}?${previous}`, `${base}?${next}`]);
});

test("page_size is added when it is not the default, page appended last otherwise", () => {
  const base = "https://assay.example/api/v1/orgs/acme/runs/";
  // 10 items, 50 a page: page 2 is past the end, its previous the last page.
  expect(links(`${base}?status=failed`, 2, 50)).toEqual([`${base}?status=failed&page=1`, null]);
  expect(links(`${base}`, 1, 7)[1]).toBe(`${base}?page=2&page_size=7`);
});
