// Validators that slice a large text into many small strings (a CSV cell each) leave garbage the
// collector does not see: JSC counts the string cells, not the characters they own outside its
// heap, so it let a worker grow by ~110 MiB on a 10 MiB CSV before collecting (measured,
// docs/benchmarks.md). A collection hint every MiB of text read keeps it flat for no measurable
// time: JSC collects the young strings concurrently.

/** Characters read between two hints. */
export const GC_PACE_CHARS = 1 << 20;

/** Call `at(offset)` as a scan advances; it asks for a collection every GC_PACE_CHARS. */
export function gcPacer(every = GC_PACE_CHARS): (offset: number) => void {
  let next = every;
  return (offset) => {
    if (offset < next) return;
    next = offset + every;
    Bun.gc(false);
  };
}
