// Every line the CLI prints goes through here, so that the process exits only once all of it is
// out. process.stdout.write into a pipe returns before the reader took the bytes, and
// process.exit() drops whatever is still buffered: a reader slower than the command (`| less`,
// `| ssh …`) got the first 64 KiB of an export and exit 0. Node and Bun both call the write's
// callback once the bytes are handed to the kernel (the light client runs on both).

const pending = new Set<Promise<void>>();
/** Streams whose reader went away: later writes are dropped. */
const closed = new WeakSet<NodeJS.WriteStream>();
/** Each guarded stream's writes not yet out, settled at once if the stream fails. */
const unsettled = new WeakMap<NodeJS.WriteStream, Set<() => void>>();

function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  // A closed reader (EPIPE: `| head`, `| true`) is the reader's choice, not a failure of the
  // command: its exit code stays the command's. Node emits the failure as an 'error' event, which
  // with no listener throws, printing a stack and exiting 1 (Bun does not): listened to here.
  let waiting = unsettled.get(stream);
  if (!waiting) {
    const set = new Set<() => void>();
    unsettled.set(stream, set);
    stream.on("error", () => {
      closed.add(stream);
      for (const settle of set) settle();
      set.clear();
    });
    waiting = set;
  }
  if (closed.has(stream)) return Promise.resolve();
  const queue = waiting;
  const done = new Promise<void>((resolve) => {
    const settle = () => {
      queue.delete(settle);
      resolve();
    };
    queue.add(settle);
    stream.write(text, settle);
  });
  pending.add(done);
  void done.then(() => pending.delete(done));
  return done;
}

/** Writes to stdout; resolves once the text is out (awaiting it is optional: see drained()). */
export const out = (text: string): Promise<void> => write(process.stdout, text);
/** Writes to stderr, likewise. */
export const err = (text: string): Promise<void> => write(process.stderr, text);

/** Resolves once everything written so far is out: call it before process.exit(). */
export async function drained(): Promise<void> {
  while (pending.size) await Promise.all(pending);
}
