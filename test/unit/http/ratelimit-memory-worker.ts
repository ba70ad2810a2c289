// A thread of the concurrency test (ratelimit-memory.test.ts): attaches to the budgets, waits at
// the gate until every thread is ready, then takes the same budgets `calls` times at a fixed
// `now`, and reports the TATs of the calls that were counted.
import { MemoryBudgets, type MemoryBudgetsInit } from "../../../src/http/ratelimit-memory.ts";
import type { Budget } from "../../../src/http/ratelimit-shared.ts";

export interface Job {
  init: MemoryBudgetsInit;
  budgets: Budget[];
  calls: number;
  now: number;
  /** Int32 [0]: 0 until the test opens the gate. */
  gate: SharedArrayBuffer;
}

declare const self: Worker;

self.onmessage = (e: MessageEvent<Job>) => {
  const { init, budgets, calls, now, gate } = e.data;
  const budgetsHere = MemoryBudgets.attach(init);
  const g = new Int32Array(gate);
  postMessage("ready");
  while (Atomics.load(g, 0) === 0) Atomics.wait(g, 0, 0, 50);
  const counted: number[][] = [];
  let refused = 0;
  for (let i = 0; i < calls; i++) {
    const r = budgetsHere.take(budgets, now);
    if (r.every((d) => d.allowed)) counted.push(r.map((d) => d.tat));
    else refused++;
  }
  postMessage({ counted, refused });
};
