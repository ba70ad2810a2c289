// The start's sweep of content slices left without a run (a crash between a submission's slices
// and its run, a retention purge cut short). It once ran inside the start's recovery, before the
// server listened, over the whole content_chunks table: 1.5 s warm and 4.3–4.7 s cold over
// 300,000 slices, on every start, growing with the content kept (docs/deploy.md, "Start time").
// Nothing needs it before serving: no request reads a slice without its run. So it runs once
// listening begins, a range of slices per statement with requests served in between.
import type { Logger } from "../lib/log.ts";
import { uuidv7Floor } from "./content-store.ts";
import type { RunStore } from "./store.ts";

/**
 * Sweeps the slices of runs created before `beforeMs` (a run id is a UUIDv7: it sorts by time):
 * those of a younger run may be a submission being written now, whose run comes after them.
 * Stops between two ranges once `stopped()` says so; what is left, the next start sweeps.
 */
export async function sweepOrphanContent(
  store: Pick<RunStore, "removeOrphanContent">,
  log: Logger,
  beforeMs: number,
  stopped: () => boolean,
  scan?: number,
): Promise<number> {
  const before = uuidv7Floor(beforeMs);
  let removed = 0;
  try {
    for (let from: string | null = ""; from !== null && !stopped(); ) {
      const r = await store.removeOrphanContent(from, before, scan);
      removed += r.removed;
      from = r.next;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (removed) log.info("removed content slices left without a run", { removed });
  } catch (e) {
    // The database went away, or closed under a stop: the next start sweeps again.
    log.warn("sweeping content slices left without a run failed", { error: String(e) });
  }
  return removed;
}
