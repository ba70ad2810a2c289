// Page-number pagination (CONTRACT §3): ?page=1&page_size=50, page_size at most 200.
// Bad values are a 400 with an errors[] item rather than silently clamped: a client that asks
// for 1000 items and gets 200 without being told has a bug it cannot see. A page past the end
// is an empty page (with `previous`), which is friendlier to pollers than a 404.
import { t } from "elysia";
import { documentedAs, nameOf, named } from "./openapi/named.ts";
import { Int } from "./schemas.ts";
import { invalid } from "../errors.ts";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

// Validated by parsePage (clear errors[] items), documented as the integers they are.
export const PageQuery = {
  page: t.Optional(
    documentedAs(t.String(), { type: "integer", minimum: 1, default: 1, description: "1-based page number" }),
  ),
  page_size: t.Optional(
    documentedAs(t.String(), {
      type: "integer",
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      default: DEFAULT_PAGE_SIZE,
      description: "Items per page",
    }),
  ),
};

export interface Page {
  page: number;
  pageSize: number;
  limit: number;
  offset: number;
}

const MAX_OFFSET = 2 ** 31 - 1;

export function parsePage(q: { page?: string; page_size?: string }): Page {
  const errors = [];
  const page = q.page === undefined ? 1 : /^\d{1,9}$/.test(q.page) ? Number(q.page) : Number.NaN;
  const pageSize =
    q.page_size === undefined
      ? DEFAULT_PAGE_SIZE
      : /^\d{1,9}$/.test(q.page_size)
        ? Number(q.page_size)
        : Number.NaN;
  if (!(page >= 1))
    errors.push({ field: "page", code: "invalid", message: "page must be an integer of at least 1." });
  if (!(pageSize >= 1 && pageSize <= MAX_PAGE_SIZE))
    errors.push({
      field: "page_size",
      code: "invalid",
      message: `page_size must be an integer from 1 to ${MAX_PAGE_SIZE}.`,
    });
  if (errors.length) throw invalid("Invalid pagination parameters.", errors);
  // Past 2^31 - 1 rows no list reaches, and PostgreSQL's OFFSET parameter (INTEGER) is 32-bit: a
  // page that far is the same empty page on both backends, not a database error.
  return { page, pageSize, limit: pageSize, offset: Math.min((page - 1) * pageSize, MAX_OFFSET) };
}

export interface Envelope<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** A query pair's key, decoded as a form's is (`pa%67e` is `page`); as written if it does not decode. */
function keyOf(pair: string): string {
  const raw = pair.split("=", 1)[0]!.replace(/\+/g, " ");
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The envelope with absolute next/previous URLs that keep the request's other parameters. */
export function envelope<T>(publicUrl: string, p: Page, count: number, results: T[]): Envelope<T> {
  const link = (page: number) => {
    const u = new URL(publicUrl);
    const set: [string, string][] = [["page", String(page)]];
    if (u.searchParams.has("page_size") || p.pageSize !== DEFAULT_PAGE_SIZE)
      set.push(["page_size", String(p.pageSize)]);
    // The other parameters as the client wrote them: URLSearchParams decodes and re-encodes every
    // one (an ignored `x=%FF` came back as `x=%EF%BF%BD`). Ours replace theirs in place, or go last.
    const pairs = u.search.slice(1).split("&").filter(Boolean);
    for (const [key, value] of set) {
      const at = pairs.findIndex((pair) => keyOf(pair) === key);
      if (at >= 0) pairs[at] = `${key}=${value}`;
      else pairs.push(`${key}=${value}`);
    }
    u.search = pairs.join("&");
    return u.href;
  };
  const lastPage = Math.max(1, Math.ceil(count / p.pageSize));
  return {
    count,
    next: p.page < lastPage ? link(p.page + 1) : null,
    previous: p.page > 1 ? link(Math.min(p.page - 1, lastPage)) : null,
    results,
  };
}

/** One page schema per item schema (see EnvelopeOf). */
const pages = new WeakMap<object, unknown>();

/**
 * A page of `item`; named `<Item>Page` in the OpenAPI document when the item is named. One object
 * per item: two routes listing the same items (GET /orgs/, GET /admin/orgs/) must share it, as
 * the framework changes a route's schema when it first serves the route (see settle(),
 * src/http/openapi/document.ts), and two objects of one name would then differ.
 */
export const EnvelopeOf = <S extends import("elysia").TSchema>(item: S) => {
  const known = pages.get(item);
  if (known) return known as ReturnType<typeof pageOf<S>>;
  const page = pageOf(item);
  pages.set(item, page);
  return page;
};

const pageOf = <S extends import("elysia").TSchema>(item: S) => {
  const page = t.Object(
    {
      count: Int({ description: "Items in all pages" }),
      next: t.Nullable(t.String({ description: "Absolute URL of the next page" })),
      previous: t.Nullable(t.String({ description: "Absolute URL of the previous page" })),
      results: t.Array(item),
    },
    { description: "One page of a list" },
  );
  const name = nameOf(item);
  return name ? named(`${name}Page`, page) : page;
};
