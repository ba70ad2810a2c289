// Requests sent together whose writes are held until all of them wait (PostgreSQL), so a race
// between their reads and their writes happens every time instead of now and then. The test
// holds `LOCK TABLE … IN SHARE MODE` on a table every request writes: each reads (and takes the
// row locks it takes) and then waits at that write, or waits for a lock another one holds. The
// requests are sent in order, each once the one before waits, then let go together. On SQLite
// (no `databaseUrl`) they are simply sent together: its one writer runs them one after the other.
import { SQL } from "bun";
import { until } from "./fixtures.ts";
import type { call } from "./server.ts";

type Answer = Awaited<ReturnType<typeof call>>;

export async function heldTogether(
  s: { databaseUrl: string | null },
  table: string,
  requests: (() => Promise<Answer>)[],
): Promise<Answer[]> {
  if (!s.databaseUrl) return Promise.all(requests.map((r) => r()));
  const sql = new SQL({ url: s.databaseUrl, max: 1 });
  const watch = new SQL({ url: s.databaseUrl, max: 1 });
  try {
    // In an object: an array returned from begin() would be awaited inside the transaction.
    const { sent } = await sql.begin(async (tx) => {
      await tx.unsafe(`LOCK TABLE ${table} IN SHARE MODE`);
      const sent: Promise<Answer>[] = [];
      for (const r of requests) {
        const p = r();
        p.catch(() => {}); // awaited below, once this transaction ends
        sent.push(p);
        await until(async () => {
          const [w] = await watch.unsafe(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          );
          return Number(w.n) >= sent.length;
        }, `${sent.length} requests waiting on a lock`);
      }
      return { sent };
    });
    return await Promise.all(sent);
  } finally {
    await sql.close();
    await watch.close();
  }
}
