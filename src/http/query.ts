// A query parameter given twice (`?status=failed&status=error`) is a 400: the framework keeps one
// of the values (the last), so a client that meant "either" got one filter silently, and a page
// link with two `page`s one page. Only the parameters a route declares count: unknown ones are
// ignored, repeated or not (docs/api.md). After authentication and the route's own validation.
import { Elysia } from "elysia";
import { invalid } from "../errors.ts";

type RouteInfo = { method: string; path: string; hooks?: { query?: unknown } };

/** The query parameters each route declares, by `METHOD path` (HEAD reads GET's). */
export function queryKeys(routes: RouteInfo[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const r of routes) {
    const props = (r.hooks?.query as { properties?: Record<string, unknown> } | undefined)?.properties;
    if (props) out.set(`${r.method} ${r.path}`, new Set(Object.keys(props)));
  }
  return out;
}

export function queryOnce(table: () => Map<string, Set<string>>) {
  return new Elysia({ name: "query-once" }).onBeforeHandle({ as: "global" }, ({ request, route }) => {
    const url = request.url;
    const q = url.indexOf("?");
    if (q < 0) return;
    const method = request.method === "HEAD" ? "GET" : request.method;
    const keys = table().get(`${method} ${route}`);
    if (!keys) return;
    const seen = new Set<string>();
    const twice: string[] = [];
    for (const k of new URLSearchParams(url.slice(q)).keys()) {
      if (!keys.has(k)) continue;
      if (seen.has(k) && !twice.includes(k)) twice.push(k);
      seen.add(k);
    }
    if (twice.length)
      throw invalid(
        "A query parameter is given more than once.",
        twice.map((field) => ({
          field,
          code: "duplicate",
          message: `${field} is given more than once; send it once.`,
        })),
      );
  });
}
