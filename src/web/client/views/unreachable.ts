// What a page restored from the back-forward cache shows while the server does not answer the
// session read (main.ts, pageshow): not the page, which may be out of date or no longer this
// user's to see, but this, with a way to try again.
import { ApiError } from "../api.ts";
import { h } from "../dom.ts";
import { notice } from "../ui.ts";

/** Why the session could not be read: `timeout` when no answer came in `waitedMs`. */
export function unreachableView(why: unknown, waitedMs: number, retry: () => void): HTMLElement {
  const text =
    why === "timeout"
      ? `The server did not answer within ${waitedMs / 1000} seconds.`
      : why instanceof ApiError
        ? `The server answered: ${why.message}`
        : "The server could not be reached.";
  const again = h("button", { type: "button", class: "button", onclick: retry }, "Try again");
  return h(
    "main",
    { id: "unreachable", class: "unreachable", tabindex: "-1" },
    h(
      "div",
      { class: "card" },
      h("h1", { tabindex: "-1" }, "Could not reach the server"),
      notice(
        "error",
        h("p", null, text),
        h("p", null, "This page is not shown until the server confirms who is signed in."),
      ),
      h("div", { class: "actions" }, again),
    ),
  );
}
