// Calls answered by a worker thread, one message each way, matched by id: the intake thread
// (src/runs/intake/offload.ts) and the workflow check thread (src/workflows/check-thread.ts).
// The thread is started on the first call. A thread that dies fails its calls with a 503 and the
// next call starts another; a refusal comes back as the AppError it was (errors.ts, WireError).
// With a deadline, a call that runs too long on the thread is refused and the thread replaced:
// a computation cannot be interrupted in place (the check thread: a 1 KB XSD whose nested group
// references double at each level took minutes to compile).
import { fromWire, serviceUnavailable, type WireError } from "../errors.ts";
import type { Logger } from "./log.ts";

/** What a thread answers: a value, a refusal, or a failure of its own (a bug: a 500, logged). */
export type ThreadAnswer<T> =
  | ({ id: number; ok: true } & T)
  | { id: number; ok: false; error: WireError }
  | { id: number; ok: false; failure: string };

/** Sent by the thread before an answer: the call has started (a deadline runs from then). */
export interface ThreadProgress {
  id: number;
  progress: unknown;
}

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
  /**
   * A call's time limit from its first progress report; past it the call is refused with
   * `error(message, its last progress)`, the thread terminated and the other calls sent again to
   * a new one. Only for calls that are pure computation (sent twice, they answer the same) and
   * transfer nothing.
   */
  deadline?: { ms: number; error(message: In, progress: unknown): Error };
}): ThreadCalls<In, Out> {
  interface Waiting {
    resolve(v: Out): void;
    reject(e: unknown): void;
    message: In & { id: number };
    progress?: unknown;
    timer?: ReturnType<typeof setTimeout>;
  }
  let worker: Worker | null = null;
  const waiting = new Map<number, Waiting>();
  let nextId = 1;

  const failAll = (detail: string) => {
    for (const w of waiting.values()) {
      clearTimeout(w.timer);
      w.reject(serviceUnavailable(detail, 1));
    }
    waiting.clear();
  };

  /** The call ran past its deadline: refused; the thread is replaced and the others sent again. */
  function expire(id: number) {
    const p = waiting.get(id);
    const w = worker;
    if (!p || !opts.deadline) return;
    waiting.delete(id);
    p.reject(opts.deadline.error(p.message, p.progress));
    opts.log?.warn(
      `${opts.name}: a call ran past its ${opts.deadline.ms} ms deadline; the thread is replaced`,
    );
    worker = null; // before terminate: its close event is then not a loss
    w?.terminate();
    if (!waiting.size) return;
    const next = spawn();
    worker = next;
    for (const q of waiting.values()) {
      clearTimeout(q.timer);
      q.timer = undefined;
      q.progress = undefined;
      next.postMessage(q.message);
    }
  }

  function spawn(): Worker {
    const w = new Worker(opts.url);
    w.onmessage = (e: MessageEvent<ThreadAnswer<Answer> | ThreadProgress>) => {
      const m = e.data;
      const p = waiting.get(m.id);
      if (!p || worker !== w) return;
      if ("progress" in m) {
        p.progress = m.progress;
        if (opts.deadline && !p.timer) p.timer = setTimeout(() => expire(m.id), opts.deadline.ms);
        return;
      }
      clearTimeout(p.timer);
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
        waiting.set(id, { resolve, reject, message: sent });
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
