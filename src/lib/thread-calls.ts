// Calls answered by a worker thread, one message each way, matched by id: the intake thread
// (src/runs/intake/offload.ts) and the workflow check thread (src/workflows/check-thread.ts).
// The thread is started on the first call. A thread that dies fails its calls with a 503 and the
// next call starts another; a refusal comes back as the AppError it was (errors.ts, WireError).
import { fromWire, serviceUnavailable, type WireError } from "../errors.ts";
import type { Logger } from "./log.ts";

/** What a thread answers: a value, a refusal, or a failure of its own (a bug: a 500, logged). */
export type ThreadAnswer<T> =
  | ({ id: number; ok: true } & T)
  | { id: number; ok: false; error: WireError }
  | { id: number; ok: false; failure: string };

export interface ThreadCalls<In, Out> {
  /** Sends `message` (with `id` added; `transfer` moved, or copied when it cannot be). */
  call(message: In, transfer?: Transferable[]): Promise<Out>;
  /** Calls not answered yet. */
  readonly inFlight: number;
  /** Fails the calls in flight (503) and stops the thread. */
  close(why?: string): void;
}

export function threadCalls<In extends object, Answer extends object, Out>(opts: {
  url: URL | string;
  /** The thread's name in logs and failures, e.g. "intake thread". */
  name: string;
  /** What a lost thread's callers are told (a 503 with Retry-After: 1). */
  lostDetail: string;
  /** The value of an answer that went well. */
  read(answer: { id: number; ok: true } & Answer): Out;
  log?: Logger;
}): ThreadCalls<In, Out> {
  let worker: Worker | null = null;
  const waiting = new Map<number, { resolve(v: Out): void; reject(e: unknown): void }>();
  let nextId = 1;

  const failAll = (detail: string) => {
    for (const w of waiting.values()) w.reject(serviceUnavailable(detail, 1));
    waiting.clear();
  };

  function spawn(): Worker {
    const w = new Worker(opts.url);
    w.onmessage = (e: MessageEvent<ThreadAnswer<Answer>>) => {
      const m = e.data;
      const p = waiting.get(m.id);
      if (!p) return;
      waiting.delete(m.id);
      if (m.ok) p.resolve(opts.read(m));
      else if ("error" in m) p.reject(fromWire(m.error));
      else p.reject(new Error(`${opts.name}: ${m.failure}`));
    };
    const lost = (why: string) => {
      if (worker !== w) return;
      worker = null;
      opts.log?.error(`${opts.name} lost; its calls get 503`, { why });
      failAll(opts.lostDetail);
    };
    w.addEventListener("error", (e) => lost(String((e as ErrorEvent).message ?? e)));
    w.addEventListener("close", () => lost("exited"));
    return w;
  }

  return {
    call(message, transfer = []) {
      worker ??= spawn();
      const w = worker;
      const id = nextId++;
      const sent = { ...message, id };
      return new Promise<Out>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        try {
          w.postMessage(sent, transfer);
        } catch {
          w.postMessage(sent); // a buffer that cannot be transferred is copied
        }
      });
    },
    get inFlight() {
      return waiting.size;
    },
    close(why = "The server is shutting down.") {
      const w = worker;
      worker = null;
      failAll(why);
      w?.terminate();
    },
  };
}
