// SQL for reading workflow versions (the snapshots themselves are written by store.ts's save and
// read, parsed and cached, by its version()).
import { type Db, countedPage, get } from "../db/program.ts";

export interface VersionMeta {
  workflow_id: number;
  version: number;
  created_at: string;
  created_by: number | null;
  created_by_name: string | null;
  restored_from: number | null;
  step_count: number | null;
}

const COLS = "workflow_id, version, created_at, created_by, created_by_name, restored_from, step_count";
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const toMeta = (r: VersionMeta): VersionMeta => ({
  ...r,
  version: Number(r.version),
  created_by: num(r.created_by),
  restored_from: num(r.restored_from),
  step_count: num(r.step_count),
});

export function createVersionStore(db: Db) {
  return {
    /** Newest first. */
    async list(
      workflowId: number,
      limit: number,
      offset: number,
    ): Promise<{ count: number; items: VersionMeta[] }> {
      const { count: n, rows } = await countedPage<VersionMeta>(db, {
        count: "SELECT count(*) AS n FROM workflow_versions WHERE workflow_id = CAST(? AS INTEGER)",
        countParams: [workflowId],
        page: `SELECT ${COLS} FROM workflow_versions WHERE workflow_id = CAST(? AS INTEGER) ORDER BY version DESC LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
        pageParams: [workflowId, limit, offset],
        order: "p.version DESC",
        key: "version",
      });
      return { count: n, items: rows.map(toMeta) };
    },
    async meta(workflowId: number, version: number): Promise<VersionMeta | null> {
      const r = await db.exec(
        get<VersionMeta>(
          `SELECT ${COLS} FROM workflow_versions WHERE workflow_id = ? AND version = ?`,
          workflowId,
          version,
        ),
      );
      return r ? toMeta(r) : null;
    },
  };
}
export type VersionStore = ReturnType<typeof createVersionStore>;
