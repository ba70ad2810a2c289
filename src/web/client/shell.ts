// The frame around every signed-in page: the org switcher, navigation (only what the user's
// role allows), and the account menu.
import { type Child, h } from "./dom.ts";
import { navigate } from "./router.ts";
import { can, defaultOrg, me, signOut } from "./session.ts";

export function shell(pageOrg: string | null, path: string, content: Child): HTMLElement {
  const user = me();
  // Pages outside an org (tokens, account, admin) keep the last org's navigation.
  const org = pageOrg ?? defaultOrg();
  const link = (href: string, label: string) =>
    h("li", null, h("a", { href, "aria-current": path.startsWith(href) ? "page" : null }, label));
  // The org as the address named it, decoded: encoded again, so that a crafted address
  // ("/app/orgs/acme%2F..%2F..%2Fadmin/…") cannot point the navigation at other pages.
  const base = org ? `/app/orgs/${encodeURIComponent(org)}/` : "";
  const orgNav = org
    ? [
        link(`${base}workflows/`, "Workflows"),
        link(`${base}runs/`, "Runs"),
        link(`${base}members/`, "Members"),
        can(org, "admin") ? link(`${base}webhooks/`, "Webhooks") : null,
        can(org, "admin") ? link(`${base}audit/`, "Audit log") : null,
      ]
    : [];
  // A menu of links rather than a <select> that navigates on change: arrowing through a
  // select must not switch pages (WCAG 3.2.2).
  const current = user.orgs.find((o) => o.org_slug === org);
  const switcher = user.orgs.length
    ? h(
        "details",
        {
          class: "org-switch",
          // A disclosure menu closes with Escape (focus back on its button) and when the keyboard
          // leaves it: an open <details> does neither by itself, and stayed over the page.
          onkeydown: (e: KeyboardEvent) => {
            const d = e.currentTarget as HTMLDetailsElement;
            if (e.key !== "Escape" || !d.open) return;
            e.preventDefault();
            d.open = false;
            d.querySelector("summary")?.focus();
          },
          onfocusout: (e: FocusEvent) => {
            const d = e.currentTarget as HTMLDetailsElement;
            const to = e.relatedTarget as Node | null;
            if (to && !d.contains(to)) d.open = false;
          },
        },
        h(
          "summary",
          null,
          h("span", { class: "sr-only" }, "Organization: "),
          current ? `${current.name} (${current.role})` : "Organizations",
        ),
        h(
          "ul",
          { class: "menu" },
          user.orgs.map((o) =>
            h(
              "li",
              null,
              h(
                "a",
                {
                  href: `/app/orgs/${o.org_slug}/workflows/`,
                  "aria-current": o.org_slug === org ? "true" : null,
                },
                `${o.name} (${o.role})`,
              ),
            ),
          ),
        ),
      )
    : null;
  const out = h(
    "button",
    {
      type: "button",
      class: "linklike",
      onclick: async () => {
        await signOut().catch(() => {});
        navigate("/", { replace: true });
      },
    },
    "Sign out",
  );
  return h(
    "div",
    { class: "layout" },
    h(
      "header",
      { class: "top" },
      h("a", { class: "brand", href: "/app/" }, h("span", { "aria-hidden": "true" }, "◆"), " Assay"),
      switcher,
      h(
        "nav",
        { "aria-label": "Main" },
        h("ul", null, orgNav, user.is_admin ? link("/app/admin/", "Administration") : null),
      ),
      h(
        "nav",
        { class: "account", "aria-label": "Account" },
        h(
          "ul",
          null,
          link("/app/settings/tokens/", "API tokens"),
          h(
            "li",
            null,
            h(
              "a",
              {
                href: "/app/settings/account/",
                "aria-current": path.startsWith("/app/settings/account") ? "page" : null,
                title: "Account",
              },
              user.username,
            ),
          ),
          h("li", null, out),
        ),
      ),
    ),
    h("main", { id: "main", class: "content", tabindex: "-1" }, content),
  );
}
