// Which queued runs a claim takes (the runs store's claim, store.ts): fair across orgs, yet one
// org's backlog is still claimed in groups.

export interface ClaimedRow {
  id: string;
  org_id: number;
  created_at: string;
  attempts: number;
}
export const byAge = (a: ClaimedRow, b: ClaimedRow) =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1;

/**
 * Up to `limit` of `rows` (queued runs of several orgs), one at a time to the org with the
 * fewest runs in flight plus picked so far, each org's oldest first; ties to the oldest run.
 */
export function fairPick(rows: ClaimedRow[], limit: number, load: (r: ClaimedRow) => number): ClaimedRow[] {
  const lines = new Map<number, ClaimedRow[]>();
  for (const r of [...rows].sort(byAge)) {
    const line = lines.get(Number(r.org_id));
    if (line) line.push(r);
    else lines.set(Number(r.org_id), [r]);
  }
  const picked = new Map<number, number>();
  const out: ClaimedRow[] = [];
  while (out.length < limit) {
    let best: ClaimedRow[] | undefined;
    let bestKey = 0;
    for (const [org, line] of lines) {
      if (!line.length) continue;
      const key = load(line[0]!) + (picked.get(org) ?? 0);
      if (!best || key < bestKey || (key === bestKey && byAge(line[0]!, best[0]!) < 0)) {
        best = line;
        bestKey = key;
      }
    }
    if (!best) break;
    const r = best.shift()!;
    picked.set(Number(r.org_id), (picked.get(Number(r.org_id)) ?? 0) + 1);
    out.push(r);
  }
  return out;
}
