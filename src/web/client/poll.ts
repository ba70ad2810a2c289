// What a page that follows something still going (a run, a list of runs) does when one of its
// reads fails. A dropped connection, a restart, a 429 or a 503 is said and tried again, less often
// (doubling up to 30 s, at least as long as Retry-After asks): one such failure ended the polling,
// silently, and the page said "Running" for ever after the run had finished (until 2026-11-30).
// The session's end (401) is the sign-in form's to show; a refusal or a run gone (403, 404) is
// final: said, and not asked again.
import { ApiError } from "./api.ts";
import { h } from "./dom.ts";
import { errorNotice, notice } from "./ui.ts";

export const POLL_MAX_MS = 30_000;

/** After a failed read: whether to stop, how long to wait before the next, and what to show. */
export function afterFailedPoll(
  e: unknown,
  wait: number,
  what: string,
): { stop: boolean; wait: number; shown: HTMLElement | null } {
  if (e instanceof ApiError && [401, 403, 404].includes(e.status))
    return { stop: true, wait, shown: e.status === 401 ? null : errorNotice(e) };
  const next = Math.min(
    Math.max(wait * 2, ((e instanceof ApiError && e.retryAfter) || 0) * 1000),
    POLL_MAX_MS,
  );
  const why = e instanceof ApiError ? e.message : "the server could not be reached.";
  return {
    stop: false,
    wait: next,
    shown: notice(
      "warning",
      h("p", null, `Could not refresh ${what}: ${why} Trying again in ${Math.round(next / 1000)} s.`),
    ),
  };
}
