// Nesting bounds of a run request's own JSON (the envelope's metadata and object content), checked
// on the parsed value before anything recursive sees it: JSON.stringify is recursive, and a
// 200 KB metadata object 100,000 levels deep overflowed its stack (a 500 after 1.3 s, issue #19).

/** Metadata is API data: the bound of every API request body (src/http/limits.ts). */
export const MAX_METADATA_DEPTH = 256;

/** Whether `value` holds containers nested deeper than `max` (the value itself is level 1). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  // Iterative, depth-first: the stack holds at most one level's siblings per level.
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown> | unknown[];
    const depth = depths.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (typeof child === "object" && child !== null) {
        stack.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
