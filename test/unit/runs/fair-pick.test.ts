// The claim's pick (src/runs/fair-pick.ts): fair across orgs, yet one org's backlog is
// still claimed in groups.
import { describe, expect, test } from "bun:test";
import { type ClaimedRow, fairPick } from "../../../src/runs/fair-pick.ts";

const row = (id: string, org: number, created_at: string): ClaimedRow => ({
  id,
  org_id: org,
  created_at,
  attempts: 0,
});
const ids = (rows: ClaimedRow[]) => rows.map((r) => r.id);

describe("fairPick", () => {
  test("one org's backlog: its oldest runs, up to the limit", () => {
    const rows = [row("a3", 1, "03"), row("a1", 1, "01"), row("a2", 1, "02"), row("a4", 1, "04")];
    expect(ids(fairPick(rows, 3, () => 0))).toEqual(["a1", "a2", "a3"]);
  });

  test("several orgs: turns, each org's oldest first, ties to the oldest run", () => {
    const rows = [
      row("a1", 1, "01"),
      row("a2", 1, "02"),
      row("a3", 1, "03"),
      row("b1", 2, "05"),
      row("b2", 2, "06"),
    ];
    expect(ids(fairPick(rows, 4, () => 0))).toEqual(["a1", "b1", "a2", "b2"]);
  });

  test("an org with runs in flight waits for those with fewer", () => {
    const rows = [row("a1", 1, "01"), row("a2", 1, "02"), row("b1", 2, "05"), row("b2", 2, "06")];
    const busy = new Map([[1, 2]]);
    const load = (r: ClaimedRow) => busy.get(r.org_id) ?? 0;
    expect(ids(fairPick(rows, 3, load))).toEqual(["b1", "b2", "a1"]);
  });
});
