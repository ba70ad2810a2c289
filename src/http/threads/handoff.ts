// A run checked before the route ran. An HTTP thread that serves a sync run itself checks the
// document before the limits count the request (thread-runs.ts: what it cannot finish goes to the
// main thread untouched); the route then runs as always up to the body (token, role, workflow,
// rate limits and budgets, workflow state, version, steps), and runService.start asks the offer
// for the submission and its final state, which it writes (executor.commitInline) — or, if the
// version that runs is not the one checked, reads and checks the body itself.
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
