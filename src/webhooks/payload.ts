// Event bodies (CONTRACT §7): {type, timestamp, data}. `timestamp` is when the event happened
// (the run finished); the webhook-timestamp header is when the attempt was made.
import { presentRun } from "../runs/present.ts";
import type { RunStore } from "../runs/store.ts";
import type { RunStatus } from "../runs/types.ts";

/** The events a final status emits: always run.completed, plus the status's own if it has one. */
export function eventsForStatus(status: RunStatus): string[] {
  const own: Partial<Record<RunStatus, string>> = {
    succeeded: "run.succeeded",
    failed: "run.failed",
    error: "run.error",
  };
  return own[status] ? ["run.completed", own[status]] : ["run.completed"];
}

/** The run without findings: a webhook says what happened; the report is fetched with a token. */
export async function runEventBody(
  runs: RunStore,
  origin: string,
  d: { event: string; created_at: string; run_id: string | null; org_id: number; org_slug: string },
): Promise<string | null> {
  // Step summaries only: no finding is read (each step's findings_count says how many).
  const run = d.run_id ? await runs.get(d.org_id, d.run_id, 0) : null;
  if (!run) return null;
  const data = presentRun(origin, d.org_slug, run);
  return JSON.stringify({ type: d.event, timestamp: d.created_at, data: { run: data } });
}

export function pingBody(webhookId: number, url: string): string {
  return JSON.stringify({
    type: "ping",
    timestamp: new Date().toISOString(),
    data: { webhook: { id: webhookId, url } },
  });
}
