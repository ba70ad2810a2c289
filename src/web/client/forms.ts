// Server-side validation errors shown where they belong: each errors[] item next to the control
// whose data-field names it (or the closest enclosing one), the rest in a summary at the top.
import { ApiError, type ErrorItem } from "./api.ts";
import { h } from "./dom.ts";
import { errorNotice } from "./ui.ts";

export function clearErrors(form: HTMLElement): void {
  for (const el of form.querySelectorAll(".field-error, .form-errors")) el.remove();
  for (const el of form.querySelectorAll("[aria-invalid]")) {
    el.removeAttribute("aria-invalid");
    const ids = (el.getAttribute("aria-describedby") ?? "").split(" ").filter((x) => !x.endsWith("-err"));
    if (ids.length) el.setAttribute("aria-describedby", ids.join(" "));
    else el.removeAttribute("aria-describedby");
  }
}

/** The control for an error's field: exact data-field, else the longest enclosing path. */
function target(form: HTMLElement, field: string): { el: HTMLElement; rest: string } | null {
  let best: HTMLElement | null = null;
  let bestLen = -1;
  for (const el of form.querySelectorAll<HTMLElement>("[data-field]")) {
    const f = el.dataset.field!;
    const encloses = field === f || field.startsWith(`${f}.`) || field.startsWith(`${f}[`);
    if (encloses && f.length > bestLen) {
      best = el;
      bestLen = f.length;
    }
  }
  if (!best) return null;
  const rest = field.slice(bestLen).replace(/^\./, "");
  // An item of the field's list ("[0].must") is named with the list ("patterns[0].must").
  const own = rest.startsWith("[")
    ? (best.dataset
        .field!.split(/[.[\]]+/)
        .filter(Boolean)
        .pop() ?? "")
    : "";
  return { el: best, rest: own + rest };
}

/**
 * "is required" → "message is required": validator messages name no subject. A message that
 * already starts with it ("filename may not contain …") is shown as it is, not "filename filename …".
 */
function wording(item: ErrorItem, rest: string): string {
  const subject =
    rest ||
    item.field
      .split(/[.[\]]+/)
      .filter(Boolean)
      .pop() ||
    "";
  if (!subject || !/^[a-z]/.test(item.message) || item.message.startsWith(`${subject} `)) return item.message;
  return `${subject} ${item.message}`;
}

let errIds = 0;
export function showErrors(form: HTMLElement, e: unknown): void {
  clearErrors(form);
  const summary: HTMLElement[] = [];
  if (e instanceof ApiError && e.errors.length) {
    let first: HTMLElement | null = null;
    for (const item of e.errors) {
      const t = target(form, item.field);
      if (!t) {
        summary.push(h("li", null, item.field ? `${item.field}: ${item.message}` : item.message));
        continue;
      }
      const id = `e${++errIds}-err`;
      const msg = h(
        "p",
        { class: "field-error", id },
        h("span", { "aria-hidden": "true" }, "✖ "),
        wording(item, t.rest),
      );
      const box = t.el.closest(".field, fieldset") ?? t.el;
      if (box === t.el) t.el.after(msg);
      else box.append(msg);
      // A field folded away (a step's Limits) is unfolded: its message unseen, and focus, which a
      // hidden field cannot take, fell to the page.
      for (let d = t.el.closest("details"); d; d = d.parentElement?.closest("details") ?? null) d.open = true;
      t.el.setAttribute("aria-invalid", "true");
      t.el.setAttribute("aria-describedby", `${t.el.getAttribute("aria-describedby") ?? ""} ${id}`.trim());
      first ??= t.el;
    }
    const box = h(
      "div",
      { class: "form-errors" },
      errorNotice(new ApiError(e.status, e.code, `${e.message} See the messages next to the fields.`)),
    );
    if (summary.length) box.append(h("ul", { class: "error-list" }, summary));
    form.prepend(box);
    first?.focus();
    return;
  }
  form.prepend(h("div", { class: "form-errors" }, errorNotice(e)));
  (form.querySelector(".form-errors") as HTMLElement | null)?.scrollIntoView({ block: "nearest" });
}

/** Client-side problems reported the same way as the server's. */
export const localError = (errors: ErrorItem[]) =>
  new ApiError(400, "invalid_request", "Some fields need attention.", errors);

/**
 * A list's answer, or the 400 that refused its filters (to be shown with showErrors next to the
 * filter form's fields); any other error is thrown on to the app's error page.
 */
export async function refusedFilters<T>(answer: Promise<T>): Promise<[T, null] | [null, ApiError]> {
  try {
    return [await answer, null];
  } catch (e) {
    if (e instanceof ApiError && e.status === 400) return [null, e];
    throw e;
  }
}
