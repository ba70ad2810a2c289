// The shape of a request body, measured in one pass over its bytes before anything parses it
// (src/http/limits.ts for API bodies, src/runs/intake/offload.ts for run requests).

/**
 * One pass over a body before anything parses it: `too_deep` when brackets nest deeper than
 * `maxDepth`, `too_many_values` when it holds more than `maxTokens` structural characters (`{`
 * `[` `,` `:` outside strings; a JSON array of n elements has about n, an object of n members
 * about 2n). Parsing costs the HTTP thread ~1–2 µs per object member and ~0.1 µs per array
 * element: a 2 MiB body of 235,000 members held it 0.5 s, a 20 MiB one (the stored schemas'
 * limit) 5 s, and the parse runs before authentication (security.md).
 */
export function scanBody(
  bytes: Uint8Array,
  maxDepth: number,
  maxTokens: number,
  json: boolean,
): "too_deep" | "too_many_values" | null {
  let depth = 0;
  let tokens = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === 0x5c) i++;
      else if (b === 0x22) inString = false;
    } else if (b === 0x5b || b === 0x7b) {
      if (++depth > maxDepth) return "too_deep";
      if (++tokens > maxTokens) return "too_many_values";
    } else if (b === 0x5d || b === 0x7d) {
      if (depth > 0) depth--; // never below 0: leading closers must not buy extra depth
    } else if (b === 0x2c || b === 0x3a) {
      if (++tokens > maxTokens) return "too_many_values";
    } else if (b === 0x22 && json) inString = true;
  }
  return null;
}
