// Test servers only: a node whose clock is off by a fixed amount, as a machine whose NTP has
// drifted (docs/deploy.md, "Clocks"; test/nodes-clock-skew.test.ts). Set from
// ASSAY_TEST_CLOCK_OFFSET_MS by `assay serve` alone, never a flag or a setting of `serve --help`,
// and logged as a warning at start. It shifts the whole process's wall clock — Date.now() and
// `new Date()` — so every time the node takes from its own clock is off, as on such a machine;
// in-process test servers share their test's clock and cannot use it. Timers and
// performance.now() are not wall clocks and are left alone; so are the worker threads (their
// times are durations).

export const TEST_CLOCK_ENV = "ASSAY_TEST_CLOCK_OFFSET_MS";

/** The offset asked for in `env` (integer ms, may be negative), or 0; throws on anything else. */
export function testClockOffset(env: Record<string, string | undefined>): number {
  const raw = env[TEST_CLOCK_ENV];
  if (!raw) return 0;
  if (!/^-?\d{1,10}$/.test(raw)) throw new Error(`${TEST_CLOCK_ENV} must be an integer (ms), got "${raw}"`);
  return Number(raw);
}

/** Moves this process's wall clock by `offsetMs` from now on. */
export function skewClock(offsetMs: number): void {
  if (!offsetMs) return;
  const Real = Date;
  const realNow = Real.now.bind(Real);
  // A function, not a subclass: `Date()` without `new` still works, and every Date — made here or
  // by the runtime — is an instance of it (same prototype).
  function Skewed(this: unknown, ...args: unknown[]) {
    if (!new.target) return new Real(realNow() + offsetMs).toString();
    return args.length === 0 ? new Real(realNow() + offsetMs) : new Real(...(args as [number]));
  }
  Skewed.prototype = Real.prototype;
  Object.setPrototypeOf(Skewed, Real);
  Skewed.now = () => realNow() + offsetMs;
  globalThis.Date = Skewed as unknown as DateConstructor;
}
