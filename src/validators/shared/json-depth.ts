// How deep a JSON text nests, against MAX_JSON_DEPTH. The exact answer scans the text; for text
// JSON.parse accepted, the parsed value usually proves it more cheaply (parsedDepthExceededAt).
import { MAX_JSON_DEPTH } from "../limits.ts";

/** Offset where nesting first exceeds MAX_JSON_DEPTH, or -1. Strings are skipped. */
export function depthExceededAt(text: string, max = MAX_JSON_DEPTH): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 91 || c === 123) {
      if (++depth > max) return i;
    } else if (c === 93 || c === 125) depth--;
  }
  return -1;
}

/**
 * Containers in a parsed value, or -1 when one is nested deeper than `max` (iterative walk).
 * Over the value, not the text: ~4× quicker than depthExceededAt on a 10 MiB array.
 */
function containersWithin(value: unknown, max: number): number {
  if (typeof value !== "object" || value === null) return 0;
  const stack: object[] = [value];
  const depths: number[] = [1];
  let count = 0;
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown>;
    const depth = depths.pop() as number;
    if (depth > max) return -1;
    count++;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child = node[i];
        if (typeof child === "object" && child !== null) {
          stack.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in node) {
        const child = node[key];
        if (typeof child === "object" && child !== null) {
          stack.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return count;
}

/**
 * "[" and "{" anywhere in the text, strings included (indexOf runs natively); counting stops
 * past `limit`, so a text full of brackets in strings costs no more than its containers.
 */
function openers(text: string, limit: number): number {
  let n = 0;
  for (const c of ["{", "["]) {
    for (let i = text.indexOf(c); i >= 0 && n <= limit; i = text.indexOf(c, i + 1)) n++;
  }
  return n;
}

/**
 * depthExceededAt(text) for text that JSON.parse turned into `value`, cheaply when it can be
 * proved: if the text holds no more "[" and "{" than the value holds containers, every bracket
 * is a container of the value (none in a string, none dropped with a duplicate key), so the
 * value's depth is the text's. Otherwise (or when too deep, for the offset) the exact scan.
 */
export function parsedDepthExceededAt(text: string, value: unknown, max = MAX_JSON_DEPTH): number {
  // Each level of nesting opens with its own bracket: a text with at most `max` of them cannot
  // nest deeper, whatever the value. Settles a small document without walking its value.
  if (openers(text, max) <= max) return -1;
  const containers = containersWithin(value, max);
  if (containers >= 0 && openers(text, containers) === containers) return -1;
  return depthExceededAt(text, max);
}
