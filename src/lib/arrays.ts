// `a.push(...b)` passes b's items as call arguments: past a few hundred thousand (a worker's
// stack is smaller than the main thread's) it throws RangeError "Maximum call stack size
// exceeded". Document-sized arrays (a JSON array, a YAML sequence, the nodes a Schematron context
// matches) are appended one by one.

/** Appends every item of `from` to `to`, however many. */
export function appendAll<T>(to: T[], from: readonly T[]): void {
  for (let i = 0; i < from.length; i++) to.push(from[i]!);
}
