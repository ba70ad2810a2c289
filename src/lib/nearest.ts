// The name a mistyped one most likely meant: settings (src/config.ts) and the clients' variables
// (src/cli/env.ts) say "did you mean …" with it. No imports: the light client bundles it.

/** Levenshtein distance (names are short). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The name in `names` that `name` most likely meant: the closest within a fifth of its length (2
 * edits at least), else the only one it is a prefix of or that is a prefix of it; or null.
 */
export function nearest(name: string, names: readonly string[]): string | null {
  const close = names
    .map((k) => ({ k, d: distance(name, k) }))
    .filter((c) => c.d <= Math.max(2, Math.floor(name.length / 5)))
    .sort((a, b) => a.d - b.d)[0];
  const prefix = names.filter((k) => k.startsWith(name) || name.startsWith(k));
  return close?.k ?? (prefix.length === 1 ? prefix[0]! : null);
}
