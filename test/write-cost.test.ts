// The durable write of a sync run (issue #26), measured by scripts/bench/write-cost.ts on the
// store's own write path: which B-trees a group commit dirties and how full their pages stay. The
// list indexes once grew at their left end (descending keys) and split their pages in half — 26
// entries a leaf instead of ~47, and half again as many WAL frames per commit. Page counts do not
// depend on the machine's speed, only on the schema and the statements.
import { describe, expect, test } from "bun:test";
import { measureWriteCost } from "../scripts/bench/write-cost.ts";
import { onPostgres } from "./helpers/backend.ts";

describe.skipIf(onPostgres)("the durable write of a sync run (SQLite)", () => {
  test("the run list indexes fill their pages as runs are appended", async () => {
    const c = await measureWriteCost(12, 600, 1200);
    const tree = (name: string) => c.trees.find((t) => t.name === name)!;
    for (const name of ["runs_org_status_created", "runs_org_workflow_status_created"]) {
      expect(tree(name).rows).toBeGreaterThan(1500);
      // A 4 KiB page holds ~50 of these ~77-byte entries; a half-split index holds ~26.
      expect(tree(name).rowsPerLeaf).toBeGreaterThan(40);
    }
  });

  test("a group commit of 12 runs writes the run, its submission and two list indexes, nothing else", async () => {
    const c = await measureWriteCost(12, 600, 1200);
    expect(Object.keys(c.framesByTree).sort()).toEqual(
      [
        "runs",
        "runs_org_status_created",
        "runs_org_workflow_status_created",
        "sqlite_schema",
        "submissions",
      ].sort(),
    );
    // Deterministic (exact groups, fixed-size rows): 7,471 bytes a run here with the descending
    // indexes, 6,736 with the ascending ones (docs/benchmarks.md has the bench's larger figures).
    expect(c.walBytesPerRun).toBeLessThan(7_200);
  });
});
