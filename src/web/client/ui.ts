// Shared pieces of the pages: dialogs, messages, dates, status badges, pagination.
import { ApiError } from "./api.ts";
import { type Child, h } from "./dom.ts";

/** A modal confirmation on the native <dialog>: Escape cancels, focus returns to the opener. */
export function confirmDialog(o: {
  title: string;
  message: Child;
  confirm: string;
  danger?: boolean;
}): Promise<boolean> {
  return new Promise((resolve) => {
    const opener = document.activeElement as HTMLElement | null;
    const cancel = h("button", { type: "button", class: "button secondary", value: "cancel" }, "Cancel");
    const ok = h(
      "button",
      { type: "submit", class: `button ${o.danger ? "danger" : ""}`, value: "ok" },
      o.confirm,
    );
    const titleId = `dlg-${Date.now()}`;
    const dlg = h(
      "dialog",
      { "aria-labelledby": titleId },
      h(
        "form",
        { method: "dialog" },
        h("h2", { id: titleId }, o.title),
        h("div", { class: "dialog-body" }, o.message),
        h("div", { class: "actions" }, cancel, ok),
      ),
    );
    cancel.addEventListener("click", () => dlg.close("cancel"));
    dlg.addEventListener("close", () => {
      dlg.remove();
      opener?.focus();
      resolve(dlg.returnValue === "ok");
    });
    document.body.append(dlg);
    dlg.showModal();
    cancel.focus();
  });
}

/** A message box; errors are announced (role=alert), the rest politely (role=status). */
export function notice(kind: "error" | "success" | "info" | "warning", ...content: Child[]): HTMLDivElement {
  const icon = { error: "✖", success: "✔", info: "ℹ", warning: "⚠" }[kind];
  return h(
    "div",
    { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" },
    h("span", { class: "icon", "aria-hidden": "true" }, icon),
    h("div", null, ...content),
  );
}

export function errorNotice(e: unknown): HTMLDivElement {
  if (e instanceof ApiError) {
    const items = e.errors.map((x) => h("li", null, x.field ? `${x.field}: ${x.message}` : x.message));
    const box = notice("error", h("p", null, e.message), items.length ? h("ul", null, items) : null);
    // What a page shows when its session ended under it: removed if the page is shown again.
    if (e.status === 401) box.classList.add("session-ended");
    return box;
  }
  return notice("error", h("p", null, (e as Error)?.message ?? String(e)));
}

/**
 * One polite live region for the whole app, outside #app so that no page render replaces it: a
 * screen reader announces a change in a live region it already knows, not reliably one that is
 * inserted with its text already in it (as a new page's "Webhook saved." was).
 */
let announcer: HTMLElement | null = null;
export function announcerRegion(): HTMLElement {
  if (!announcer?.isConnected) {
    announcer = h("div", { id: "announcer", class: "sr-only", role: "status" });
    document.body.append(announcer);
  }
  return announcer;
}
/** Says `text` through the app's live region (emptied first, so the same text twice is said twice). */
export function announce(text: string): void {
  const region = announcerRegion();
  region.textContent = "";
  requestAnimationFrame(() => {
    region.textContent = text;
  });
}

/**
 * A success or info message shown after an action: seen in a box, heard through the live region
 * (the box is no live region of its own, or it would be read twice).
 */
export function told(kind: "success" | "info", text: string): HTMLDivElement {
  const box = notice(kind, text);
  box.removeAttribute("role");
  announce(text);
  return box;
}

let pendingFlash: { kind: "success" | "info"; text: string } | null = null;
/** A message for the next page shown (after a save that navigates away). */
export const flash = (kind: "success" | "info", text: string) => {
  pendingFlash = { kind, text };
};
export function takeFlash(): HTMLElement | null {
  const f = pendingFlash;
  pendingFlash = null;
  return f ? told(f.kind, f.text) : null;
}

const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
/** A <time> element: local date and time, the exact ISO value on hover. */
export function time(iso: string | null | undefined, empty = "—"): Child {
  if (!iso) return h("span", { class: "muted" }, empty);
  return h("time", { datetime: iso, title: iso }, dateFmt.format(new Date(iso)));
}

export function duration(ms: number | null | undefined): string {
  if (ms == null) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1048576) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1048576).toFixed(1)} MiB`;
}

// Status is never told by colour alone: every badge has a symbol and a word.
const STATUS: Record<string, [string, string]> = {
  succeeded: ["✔", "ok"],
  passed: ["✔", "ok"],
  active: ["●", "ok"],
  failed: ["✖", "bad"],
  error: ["⚠", "bad"],
  timed_out: ["⏱", "bad"],
  canceled: ["⊘", "neutral"],
  skipped: ["↷", "neutral"],
  inactive: ["○", "neutral"],
  suspended: ["⏸", "warn"],
  revoked: ["⊘", "neutral"],
  expired: ["⏱", "neutral"],
  queued: ["…", "pending"],
  pending: ["…", "pending"],
  running: ["↻", "pending"],
  warning: ["⚠", "warn"],
  info: ["ℹ", "neutral"],
};
const SEVERITY: Record<string, [string, string]> = {
  error: ["✖", "bad"],
  warning: ["⚠", "warn"],
  info: ["ℹ", "neutral"],
};
export function severityBadge(severity: string): HTMLSpanElement {
  const [icon, tone] = SEVERITY[severity] ?? ["•", "neutral"];
  return h("span", { class: `badge ${tone}` }, h("span", { "aria-hidden": "true" }, icon), ` ${severity}`);
}

export function badge(status: string, label = status.replace("_", " ")): HTMLSpanElement {
  const [icon, tone] = STATUS[status] ?? ["•", "neutral"];
  return h("span", { class: `badge ${tone}` }, h("span", { "aria-hidden": "true" }, icon), ` ${label}`);
}

/** Previous/next links for a paginated list. */
export function pager(count: number, page: number, pageSize: number, href: (p: number) => string): Child {
  const pages = Math.max(1, Math.ceil(count / pageSize));
  // A page past the end (its last row just deleted, or an old link) still leads back, to the last
  // page rather than to more empty ones.
  if (pages <= 1 && page <= 1) return null;
  return h(
    "nav",
    { class: "pager", "aria-label": "Pages" },
    page > 1 ? h("a", { href: href(Math.min(page - 1, pages)), rel: "prev" }, "← Previous") : null,
    h("span", null, `Page ${page} of ${pages} (${count} items)`),
    page < pages ? h("a", { href: href(page + 1), rel: "next" }, "Next →") : null,
  );
}

/** A page heading that receives focus after navigation (screen readers announce the new page). */
export const heading = (text: Child, ...extra: Child[]) =>
  h(
    "div",
    { class: "page-head" },
    h("h1", { tabindex: "-1" }, text),
    extra.length ? h("div", { class: "actions" }, ...extra) : null,
  );

export const empty = (text: string) => h("p", { class: "empty" }, text);

/**
 * What an empty page of a paged list says: `text` when the list itself is empty, and that the page
 * is past the end when it is not (an old link, or its last row just deleted): "No workflows yet"
 * on page 9 of a list of 16 would be false. The pager below leads back to the last page.
 */
export const emptyPage = (count: number, text: string) =>
  empty(
    count > 0
      ? `This page is past the end of the list (${count} ${count === 1 ? "item" : "items"} in all).`
      : text,
  );

/**
 * A column heading: shown, or (for a column whose cells say what they are: buttons, a badge) only
 * read out. A header cell is never empty: a screen reader names the column of every cell it reads.
 */
export type Head = string | { hidden: string };
const headText = (x: Head) => (typeof x === "string" ? x : "");

/** A table with column headers; a "" head is an unnamed column of actions (read as "Actions"). */
export function table(head: Head[], rows: Child[][], caption?: string): HTMLElement {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      null,
      caption ? h("caption", { class: "sr-only" }, caption) : null,
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          head.map((x) =>
            h(
              "th",
              { scope: "col" },
              typeof x === "string" && x
                ? x
                : h("span", { class: "sr-only" }, typeof x === "string" ? "Actions" : x.hidden),
            ),
          ),
        ),
      ),
      h(
        "tbody",
        null,
        rows.map((r) => tableRow(head, r)),
      ),
    ),
  );
}

/** One body row of a `table` with these heads (also to append rows to one already shown). */
export function tableRow(head: Head[], cells: Child[]): HTMLTableRowElement {
  return h(
    "tr",
    null,
    // data-label: on a phone each row becomes a card of "label: value" lines (app.css).
    cells.map((c, i) =>
      h("td", { "data-label": (head[i] && headText(head[i])) || null }, h("div", { class: "cell" }, c)),
    ),
  );
}

/** Disables a form's submit button while `work` runs. */
export async function busy<T>(button: HTMLButtonElement, work: () => Promise<T>): Promise<T> {
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}
