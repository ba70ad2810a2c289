// Model-based (stateful) random testing of the management API (test/model-fuzz.test.ts): random
// sequences of operations by several users with different roles in two orgs. After each step the
// answer is what the reference model (model.ts) predicts, never a 5xx, every body matches the
// served OpenAPI document, and the audit log holds exactly the entries of the step's writes.
import type { TestServer } from "../server.ts";
import type { Receiver } from "../webhook-receiver.ts";
import { type Ops, createContext } from "./context.ts";
import { burstOps } from "./ops-burst.ts";
import { orgOps } from "./ops-org.ts";
import { runOps } from "./ops-runs.ts";
import { workflowOps } from "./ops-workflows.ts";

export { FuzzFailure } from "./context.ts";

export interface FuzzResult {
  steps: number;
  requests: number;
  /** Steps per operation, and the milliseconds each took in all (`<op> ms`). */
  ops: Record<string, number>;
  /** Answers by method and status. */
  statuses: Record<string, number>;
}

export async function modelFuzz(
  s: TestServer,
  receiver: Receiver,
  opts: { seed: number; steps: number; log?: (line: string) => void },
): Promise<FuzzResult> {
  const c = await createContext(s, receiver, opts);
  const { st, trace, full, rnd } = c;
  const op: Ops = { ...workflowOps(c), ...runOps(c), ...orgOps(c), ...burstOps(c) };
  const ops: Record<string, number> = {};
  const table = Object.entries(op);
  const total = table.reduce((n, [, [w]]) => n + w, 0);
  try {
    for (st.step = 1; st.step <= opts.steps; st.step++) {
      const roll = rnd() * total;
      let sum = 0;
      const [name, [, fn]] =
        table.find(([, [w]]) => {
          sum += w;
          return roll < sum;
        }) ?? table[0]!;
      ops[name] = (ops[name] ?? 0) + 1;
      st.expected = [];
      st.auditUnordered = false;
      trace.push(`#${st.step} ${name}`);
      const t0 = performance.now();
      await fn();
      ops[`${name} ms`] = Math.round((ops[`${name} ms`] ?? 0) + performance.now() - t0);
      await c.checkAudit();
      if (opts.log && st.step % 500 === 0)
        opts.log(`seed ${opts.seed}: ${st.step} steps, ${st.requests} requests`);
      if (trace.length > 400) full.push(...trace.splice(0, trace.length - 200));
    }
  } finally {
    st.heldRun?.gate?.open();
  }
  return { steps: opts.steps, requests: st.requests, ops, statuses: c.statuses };
}
