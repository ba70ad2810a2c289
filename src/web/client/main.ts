// Boot: find out who is signed in, then render the page the URL names inside the shell. Each
// page is a view function registered in views/; it returns a title and a body.
import { ApiError, get, whenSignedOut } from "./api.ts";
import { h, mount } from "./dom.ts";
import { type Ctx, match, navigate, startRouter } from "./router.ts";
import { SIGNED_OUT_KEY, defaultOrg, forget, loadSession, rememberOrg, session } from "./session.ts";
import { shell } from "./shell.ts";
import { announcerRegion, errorNotice, heading, takeFlash, told } from "./ui.ts";
import { loginView } from "./views/login.ts";
import { setupView } from "./views/setup.ts";
import { unreachableView } from "./views/unreachable.ts";
import "./views/index.ts";

const root = document.getElementById("app")!;
let controller: AbortController | null = null;
let endedNotice: HTMLElement | null = null;
/** The instance has no user yet (GET /api/v1/setup/): the setup form instead of the sign-in. */
let setupNeeded = false;
/** The user changed something on the page shown (typed, picked, ticked) since it was drawn. */
let edited = false;
/**
 * The page a session ended on while the user had changed something in it: shown again, with what
 * they entered, when the same user signs in again on the same address (a form's work is not lost
 * to a session's end); any other sign-in loads its page afresh.
 */
let kept: { key: string; username: string; title: string; nodes: Node[] } | null = null;
const pageKey = () => location.pathname + location.search;

function problemPage(e: unknown): { title: string; body: Node } {
  if (e instanceof ApiError && e.status === 404)
    return { title: "Not found", body: h("div", null, heading("Not found"), errorNotice(e)) };
  if (e instanceof ApiError && e.status === 403)
    return { title: "Not allowed", body: h("div", null, heading("Not allowed"), errorNotice(e)) };
  return { title: "Error", body: h("div", null, heading("Something went wrong"), errorNotice(e)) };
}

async function render(initial: boolean): Promise<void> {
  controller?.abort();
  const ctl = new AbortController();
  controller = ctl;
  const path = location.pathname;
  if (!session() && setupNeeded) {
    document.title = "Set up · Assay";
    mount(
      root,
      setupView((org) => {
        setupNeeded = false;
        navigate(`/app/orgs/${org}/workflows/`, { replace: true });
      }),
    );
    (root.querySelector("input") as HTMLInputElement | null)?.focus();
    return;
  }
  if (!session()) {
    document.title = "Sign in · Assay";
    mount(
      root,
      loginView(endedNotice, () => {
        endedNotice = null;
        const back = kept;
        kept = null;
        if (back && back.key === pageKey() && back.username === session()?.me.username) restore(back);
        else navigate(path.startsWith("/app") ? path + location.search : "/app/", { replace: true });
      }),
    );
    (root.querySelector("input") as HTMLInputElement | null)?.focus();
    return;
  }
  if (path === "/" || path === "/app" || path === "/app/") {
    const org = defaultOrg();
    navigate(org ? `/app/orgs/${org}/workflows/` : "/app/settings/tokens/", { replace: true });
    return;
  }
  const found = match(path);
  const org = found?.params.org ?? null;
  if (org) rememberOrg(org);
  root.querySelector("main")?.setAttribute("aria-busy", "true");
  let page: { title: string; body: Node };
  try {
    if (!found) throw new ApiError(404, "not_found", "There is no page at this address.");
    const ctx: Ctx = {
      params: found.params,
      query: new URLSearchParams(location.search),
      signal: ctl.signal,
      path,
    };
    page = await found.view(ctx);
  } catch (e) {
    if (ctl.signal.aborted) return;
    if (!session()) return; // the 401 handler has already shown the sign-in form
    page = problemPage(e);
  }
  if (ctl.signal.aborted) return;
  document.title = `${page.title} · Assay`;
  mount(root, shell(org, path, [takeFlash(), page.body]));
  edited = false;
  // A page that loaded with its filters refused (the user just applied them) hands focus to the
  // first refused field, as a refused form does; any other page to its heading.
  if (!initial)
    (
      (root.querySelector("main [aria-invalid=true]") ?? root.querySelector("h1")) as HTMLElement | null
    )?.focus();
  const hash = location.hash.slice(1);
  if (hash) document.getElementById(hash)?.scrollIntoView();
}

/** The kept page back in place, its input as it was; the refusal the ended session caused removed. */
function restore(back: NonNullable<typeof kept>): void {
  mount(root, ...back.nodes);
  document.title = back.title;
  for (const el of root.querySelectorAll(".session-ended")) (el.closest(".form-errors") ?? el).remove();
  root
    .querySelector("main")
    ?.prepend(told("info", "Signed in again. What you entered on this page is kept: send it again."));
  edited = true;
  (root.querySelector("h1") as HTMLElement | null)?.focus();
}

/** The session ended under the page (a 401, a sign-out in another tab): the sign-in form. */
function sessionEnded(username: string): void {
  kept =
    edited && root.querySelector("header.top")
      ? {
          key: pageKey(),
          username,
          title: document.title,
          nodes: [...root.childNodes],
        }
      : null;
  forget();
  // A modal dialog (a new token's, a confirmation) would stay over the sign-in form and keep it
  // out of reach: closed, as its Cancel does.
  for (const dlg of document.querySelectorAll("dialog[open]")) (dlg as HTMLDialogElement).close();
  // Said through the app's live region: focus goes to the username field, and the box alone,
  // inserted with its text, was not reliably read.
  endedNotice = told("info", "Your session has ended. Sign in again to continue.");
  void render(false);
}
whenSignedOut(() => {
  const s = session();
  if (s) sessionEnded(s.me.username);
});

// A sign-out in another tab of the app (it writes SIGNED_OUT_KEY): this tab stops showing its page
// at once rather than at its next request. The session is read again first: another sign-in may
// have followed (the same user: nothing changes; another user: the page drawn afresh for them).
addEventListener("storage", (e: StorageEvent) => {
  if (e.key !== SIGNED_OUT_KEY || !session()) return;
  const was = session()!.me.username;
  void (async () => {
    const now = await loadSession().catch(() => null);
    if (now?.me.username === was) return;
    if (now) {
      kept = null;
      for (const dlg of document.querySelectorAll("dialog[open]")) (dlg as HTMLDialogElement).close();
      void render(false);
      return;
    }
    sessionEnded(was);
  })();
});

// Back (or Forward) to a page the browser kept in its back-forward cache shows it as it was left,
// without asking the server: after a sign-out in another tab it showed the signed-out user's data.
// Hidden until the session is read again: the same user gets the page as it was (with what they
// typed), anyone else (or no one) the page drawn afresh, or the sign-in form.
addEventListener("pageshow", (e: PageTransitionEvent) => {
  if (!e.persisted) return;
  const was = session()?.me.username ?? null;
  root.hidden = true;
  const title = document.title;
  document.title = "Assay";
  void reread(was, title);
});

/**
 * How long a restored page waits for the session. A server that never answered left the page
 * hidden, blank, for good; after this the page says so and offers to try again (docs/web.md).
 */
const RESTORE_WAIT_MS = 10_000;
/** The restored page's current read of the session: a newer one (a retry, another Back) wins. */
let rereading: AbortController | null = null;

async function reread(was: string | null, title: string): Promise<void> {
  rereading?.abort();
  const ctl = new AbortController();
  rereading = ctl;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort();
  }, RESTORE_WAIT_MS);
  let failed: unknown = null;
  try {
    await loadSession(ctl.signal);
  } catch (e) {
    // A 401 of the second read: signed out after all (its handler has forgotten the session).
    if (e instanceof ApiError && e.status === 401) forget();
    else failed = timedOut ? "timeout" : e;
  } finally {
    clearTimeout(timer);
  }
  if (rereading !== ctl) return;
  rereading = null;
  document.getElementById("unreachable")?.remove();
  if (failed !== null) {
    // Not the page (it may be out of date, or no longer this user's), nor the sign-in form (the
    // session may well be alive): what happened, and a way to try again.
    const box = unreachableView(failed, RESTORE_WAIT_MS, () => {
      const button = box.querySelector("button")!;
      button.disabled = true;
      button.setAttribute("aria-busy", "true");
      void reread(was, title);
    });
    root.after(box);
    document.title = "Server not reachable · Assay";
    (box.querySelector("h1") as HTMLElement).focus();
    return;
  }
  if (was !== null && session()?.me.username === was) {
    document.title = title;
    root.hidden = false;
    return;
  }
  kept = null;
  endedNotice = null;
  for (const dlg of document.querySelectorAll("dialog[open]")) (dlg as HTMLDialogElement).close();
  root.hidden = false;
  await render(false);
}

async function boot() {
  announcerRegion();
  // Only what the user does fires these (a value set by a script does not).
  for (const type of ["input", "change"])
    document.addEventListener(
      type,
      (e) => {
        if (root.contains(e.target as Node) && root.querySelector("header.top")) edited = true;
      },
      true,
    );
  try {
    if (!(await loadSession())) setupNeeded = (await get<{ needed: boolean }>("setup/")).needed;
  } catch (e) {
    mount(root, h("main", { id: "main" }, errorNotice(e)));
    return;
  }
  startRouter((initial) => void render(initial));
}
void boot();
