// The sync-run fast path, main thread's side. An HTTP thread that accepted a run request the
// inline lane may take offers to read and check it itself; the route runs as always up to the
// body (token, role, workflow, rate limits and budgets, workflow state, version, steps), then
// runService.start asks the offer. The thread answers with the submission and its final state —
// the main thread then only checks the queue bound and writes (executor.commitInline) — or with
// nothing, and the route reads the body from the relay and goes on as for any request. Every
// answer, error or not, is rendered by the app on this thread: one implementation of the route.
import type { FinalState } from "../../runs/direct.ts";
import type { Intake } from "../../runs/intake/modes.ts";
import type { WorkflowVersion } from "../../workflows/types.ts";

/** What the HTTP thread read and checked: the route writes it as the run `id`. */
export interface Handed {
  id: string;
  createdAt: string;
  sub: Intake & { sha256: string };
  final: FinalState;
}

export interface Offer {
  /** The submission checked inline by the HTTP thread, or null: read the body and go on. */
  admit(def: WorkflowVersion, version: number): Promise<Handed | null>;
}

/** Set by the relay on requests whose HTTP thread can take the body (src/http/threads/relay.ts). */
export const offers = new WeakMap<Request, Offer>();
