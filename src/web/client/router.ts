// History-API routing: "/app/…" paths map to view functions. Each navigation aborts the previous
// view's fetches and polling through its AbortSignal.

export interface Ctx {
  params: Record<string, string>;
  query: URLSearchParams;
  signal: AbortSignal;
  path: string;
}
export interface Rendered {
  title: string;
  body: Node;
}
export type View = (ctx: Ctx) => Promise<Rendered>;

interface RouteDef {
  re: RegExp;
  keys: string[];
  view: View;
}
const table: RouteDef[] = [];

/** "/app/orgs/:org/runs/:id/" — a trailing slash is optional. */
export function route(pattern: string, view: View): void {
  const keys: string[] = [];
  const src = pattern
    .replace(/\/$/, "")
    .replace(/[.]/g, "\\.")
    .replace(/:(\w+)/g, (_, k: string) => {
      keys.push(k);
      return "([^/]+)";
    });
  table.push({ re: new RegExp(`^${src}/?$`), keys, view });
}

export function match(path: string): { view: View; params: Record<string, string> } | null {
  for (const r of table) {
    const m = r.re.exec(path);
    if (m) {
      const params: Record<string, string> = {};
      try {
        r.keys.forEach((k, i) => {
          params[k] = decodeURIComponent(m[i + 1]!);
        });
      } catch {
        return null; // a malformed escape (%E0%A4%A) names no page: the "not found" page, not a hang
      }
      return { view: r.view, params };
    }
  }
  return null;
}

let onChange: (initial: boolean) => void = () => {};
// A change of the #fragment alone (a link to a line of content) is not a new page.
const pageKey = () => location.pathname + location.search;
let shown = "";

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  shown = pageKey();
  onChange(false);
}

/** Re-renders the current page (after a change that alters what it shows). */
export const reload = () => onChange(false);

export function startRouter(render: (initial: boolean) => void): void {
  onChange = render;
  addEventListener("popstate", () => {
    if (pageKey() === shown) return;
    shown = pageKey();
    render(false);
  });
  // Same-origin links are handled here; new tabs, downloads and modified clicks are not.
  document.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.("a");
    if (!a || a.target || a.hasAttribute("download") || a.origin !== location.origin) return;
    if (!a.pathname.startsWith("/app") && a.pathname !== "/") return;
    if (a.pathname === location.pathname && a.search === location.search && a.hash) return;
    e.preventDefault();
    navigate(a.pathname + a.search + a.hash);
  });
  shown = pageKey();
  render(true);
}
