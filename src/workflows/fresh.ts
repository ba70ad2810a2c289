// Optimistic concurrency for workflow edits. An edit reads the workflow, applies the request,
// checks the result (long for large configs, on another thread) and saves the whole definition;
// two edits at once would each save their own copy, and the later one would undo the earlier
// (a lost rename, a deleted step back, a save onto a deleted workflow). The save is conditional
// on the version read (store.ts, StaleWorkflow); when another save came first, the edit starts
// again from what is there now, which keeps both changes, or finds the step or workflow gone (404).
import { conflict } from "../errors.ts";
import { StaleWorkflow } from "./store.ts";

/**
 * Attempts before giving up. Each lost one means another save of the same workflow succeeded, so
 * an edit among N at once loses at most N − 1 times: 12 lets a dozen simultaneous edits (a CI job
 * patching one workflow from parallel steps) all land; 5 refused 3–7 of 10 (2026-11-29).
 */
export const EDIT_ATTEMPTS = 12;

export const editConflict = () =>
  conflict("The workflow was changed by another request while this one was saved; send it again.");

/** Runs `edit` (read, apply, check, save with the version read) until no other save intervenes. */
export async function fresh<T>(edit: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await edit();
    } catch (e) {
      if (!(e instanceof StaleWorkflow)) throw e;
      if (attempt >= EDIT_ATTEMPTS) throw editConflict();
      // A short random pause spreads the losers out, so that they do not all read, check and
      // collide again in the same turn.
      await Bun.sleep(Math.random() * 2 * attempt);
    }
  }
}
