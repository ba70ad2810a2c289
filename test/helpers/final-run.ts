// A sync run in its final state, as the inline lane hands it to the run store's createFinal: one
// passed syntax step over a JSON document. For tests that write final runs without the HTTP path
// (group commits of chosen runs: final-rows, webhooks-subscriptions).
import type { FinalUpdate, NewRun } from "../../src/runs/store.ts";
import { summarize } from "../../src/runs/summary.ts";
import type { RunStep } from "../../src/runs/types.ts";

const sha256 = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");

export function finalRun(o: {
  id: string;
  orgId: number;
  workflowId: number;
  user: { id: number; username: string };
  doc: string;
}): [NewRun, FinalUpdate & { startedAt: string }] {
  const at = new Date().toISOString();
  const steps: RunStep[] = [
    {
      step_id: 1,
      order: 1,
      name: "syntax",
      validator: "syntax",
      status: "passed",
      duration_ms: 0,
      findings: [],
      error: null,
      truncated: false,
    },
  ];
  return [
    {
      id: o.id,
      createdAt: at,
      orgId: o.orgId,
      workflowId: o.workflowId,
      workflowVersion: 1,
      steps,
      user: o.user,
      idempotencyKey: null,
      submission: {
        bytes: new TextEncoder().encode(o.doc),
        contentType: "application/json",
        charset: "utf-8",
        fileType: "JSON",
        filename: null,
        metadata: {},
        sha256: sha256(o.doc),
      },
    },
    {
      status: "succeeded",
      steps,
      summary: summarize(steps),
      error: null,
      finishedAt: at,
      durationMs: 0,
      startedAt: at,
    },
  ];
}
