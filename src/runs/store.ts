// SQL for submissions and runs. The runs table is the queue (status 'queued', oldest first).
// A run's row and how it is read: run-rows.ts; which queued runs a claim takes: fair-pick.ts.
import {
  type Db,
  type Param,
  type Program,
  all,
  count,
  countedPage,
  get,
  insert,
  run,
} from "../db/program.ts";
import type { WriterThread } from "../db/writer.ts";
import { dbNow, dbTimeIn } from "../db/clock.ts";
import type { FinalTx } from "./executor.ts";
import { now } from "../db/util.ts";
import { WINDOW_MS, createWriteBatcher } from "./batch.ts";
import { createContentStore } from "./content-store.ts";
import { type FinalRows, createFinalRowsWriter } from "./final-rows.ts";
import { type Chunk, createFindingStore } from "./findings-store.ts";
import { LINK_RUN, linkParams } from "./idempotency.ts";
import { RUN_FINDINGS_INLINE } from "./present.ts";
import { type ClaimedRow, byAge, fairPick } from "./fair-pick.ts";
import { COLUMNS, JOINS, type RunRow, SELECT, summariesJson, toRun } from "./run-rows.ts";
import type { FileType } from "../validators/types.ts";
import {
  RUN_STATUSES,
  type Run,
  type RunFilters,
  type RunStatus,
  type RunStep,
  type RunSummary,
} from "./types.ts";

export interface NewRun {
  id: string;
  /** When the request came in; defaults to the time of the write. */
  createdAt?: string;
  orgId: number;
  workflowId: number;
  workflowVersion: number;
  steps: RunStep[];
  user: { id: number; username: string };
  submission: {
    bytes: Uint8Array;
    contentType: string;
    charset: string;
    fileType: FileType;
    filename: string | null;
    metadata: Record<string, unknown>;
    sha256: string;
    /** Written beforehand in this many slices (src/runs/content-store.ts): not stored inline. */
    slices?: number;
  };
  /** The request's Idempotency-Key (its user's): linked to the run in the run's transaction. */
  idempotencyKey?: string | null;
}

export interface FinalUpdate {
  status: RunStatus;
  steps: RunStep[];
  summary: RunSummary | null;
  error: string | null;
  finishedAt: string;
  /** null for a run that never started (canceled while queued). */
  durationMs: number | null;
}

export interface JobSource {
  id: string;
  org_id: number;
  status: RunStatus;
  attempts: number;
  workflow_id: number;
  workflow_version: number;
  file_type: FileType;
  charset: string;
  filename: string | null;
  content: Uint8Array | null;
  steps: string;
  created_at: string;
}

interface SourceRow extends JobSource {
  content_chunks: number;
  size: number;
}

const INSERT_SUBMISSION =
  "INSERT INTO submissions (org_id, filename, content_type, charset, file_type, size, sha256, metadata, content, content_chunks, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
/** The last parameter is the claim's lease in ms (null: no claim), ended on the database's clock. */
const insertRun = (d: Db["dialect"]) =>
  `INSERT INTO runs (id, org_id, workflow_id, workflow_version, submission_id, status, steps, created_by, created_by_name, created_at, attempts, started_at, node_id, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${dbTimeIn(d)})`;
/** A run recovery gave up (ended in error): what its webhook events need, its end included. */
export type GivenUpRun = { id: string; org_id: number; workflow_id: number; finished_at: string };
const FINISH =
  "UPDATE runs SET status = ?, steps = ?, summary = ?, error = ?, finished_at = ?, duration_ms = ?, lease_until = NULL WHERE id = ?";

// An INSERT without RETURNING: on SQLite a statement that returns a row costs ~4 µs more; the
// driver reads the rowid (PostgreSQL appends RETURNING itself).
function submissionParams(n: NewRun, ts: string): Param[] {
  const s = n.submission;
  return [
    n.orgId,
    s.filename,
    s.contentType,
    s.charset,
    s.fileType,
    s.bytes.byteLength,
    s.sha256,
    JSON.stringify(s.metadata),
    s.slices ? null : s.bytes,
    s.slices ?? 0,
    ts,
  ];
}

function* insertSubmission(n: NewRun, ts: string): Program<number> {
  return yield* insert(INSERT_SUBMISSION, "id", ...submissionParams(n, ts));
}

/**
 * Who executes a run written as running, and for how long unless renewed (src/runs/leases.ts).
 * The lease ends `leaseMs` after the write on the database's clock (src/db/clock.ts), never on
 * the node's: a node whose clock is off cannot shorten or stretch it (docs/deploy.md, "Clocks").
 */
export interface Claim {
  node: string;
  leaseMs: number;
}

/**
 * Links the request's Idempotency-Key to its run, in the run's own transaction: from the commit on,
 * a retry replays this run whatever happens to the request (src/runs/idempotency.ts).
 */
function* linkKey(n: NewRun): Program<void> {
  if (n.idempotencyKey) yield* run(LINK_RUN, ...linkParams(n.user.id, n.idempotencyKey, n.id));
}

function* insertBoth(
  sql: string,
  n: NewRun,
  ts: string,
  status: "queued" | "running",
  startedAt: string | null,
  claim: Claim | null = null,
): Program<number> {
  const sid = yield* insertSubmission(n, ts);
  yield* run(
    sql,
    n.id,
    n.orgId,
    n.workflowId,
    n.workflowVersion,
    sid,
    status,
    summariesJson(n.steps),
    n.user.id,
    n.user.username,
    ts,
    status === "running" ? 1 : 0,
    startedAt,
    claim?.node ?? null,
    claim?.leaseMs ?? null,
  );
  yield* linkKey(n);
  return sid;
}

/**
 * `writer`: SQLite's writer thread (src/db/writer.ts), which then commits the final sync runs.
 * `commitWindowMs`: the group commit's spacing under load (src/runs/batch.ts, `commit_window_us`).
 */
export function createRunStore(db: Db, writer: WriterThread | null = null, commitWindowMs = WINDOW_MS) {
  // In a join (or a LIMIT), a bare `?` makes SQLite re-plan the statement on every execution
  // (its constant propagation keys on the bound value): ~85 µs instead of ~16 µs for byId,
  // measured (docs/benchmarks.md). CAST(? AS …) binds the same value and keeps the plan.
  const byId = (id: string, orgId: number) =>
    get<RunRow>(`${SELECT} WHERE r.id = CAST(? AS TEXT) AND r.org_id = CAST(? AS INTEGER)`, id, orgId);
  const batch = createWriteBatcher(db, commitWindowMs);
  const INSERT_RUN = insertRun(db.dialect);
  // A claim's lease end, and the time it is judged by: the database's (src/db/clock.ts).
  const leaseEnd = dbTimeIn(db.dialect);
  const findings = createFindingStore(db);
  const contents = createContentStore(db, batch);
  // The final runs of one group commit share their INSERTs (src/runs/final-rows.ts).
  const writeFinal = createFinalRowsWriter(batch, writer);

  /** createFinal's write, once the findings are serialized. */
  function writeFinalRun(
    n: NewRun,
    u: FinalUpdate & { startedAt: string },
    inTx: FinalTx | undefined,
    chunks: Chunk[],
  ): Promise<number> {
    return writeFinal(finalRows(n, u, inTx, chunks, n.createdAt ?? now(), n.user.id));
  }

  /** A final run's rows; `userId` null: its user was deleted while it executed (final-rows.ts). */
  function finalRows(
    n: NewRun,
    u: FinalUpdate & { startedAt: string },
    inTx: FinalTx | undefined,
    chunks: Chunk[],
    ts: string,
    userId: number | null,
  ): FinalRows {
    const rows: FinalRows = {
      submission: () => ({ sql: INSERT_SUBMISSION, params: submissionParams(n, ts) }),
      row: (sid) => [
        n.id,
        n.orgId,
        n.workflowId,
        n.workflowVersion,
        sid,
        u.status,
        summariesJson(u.steps),
        userId,
        n.user.username,
        ts,
        u.startedAt,
        u.summary ? JSON.stringify(u.summary) : null,
        u.error,
        u.finishedAt,
        u.durationMs,
      ],
      *after() {
        if (chunks.length) yield* findings.insert(n.id, chunks);
        yield* linkKey(n);
        if (inTx) yield* inTx();
      },
      idle: () => !chunks.length && !n.idempotencyKey && (!inTx || inTx.idle?.() === true),
      wire() {
        // The final-state hooks (the webhook outbox) write nothing for an org without webhooks,
        // as of the reads they name (executor.ts, FinalHook); the thread repeats those reads in
        // its transaction. Any other run is written on the main connection.
        const reads = inTx ? (inTx.quiet?.() ?? null) : [];
        if (!reads) return null;
        return {
          reads,
          submission: rows.submission(),
          row: rows.row(0),
          after: n.idempotencyKey
            ? [
                ...findings.statements(n.id, chunks),
                { sql: LINK_RUN, params: linkParams(n.user.id, n.idempotencyKey, n.id) },
              ]
            : findings.statements(n.id, chunks),
        };
      },
      withoutUser: () => finalRows(n, u, inTx, chunks, ts, null),
    };
    return rows;
  }

  // Queued runs, counted at start (recover) and then kept in step with every write below (the
  // only writers of run status): the backpressure check runs on every submission and a count(*)
  // over a deep queue is O(queue). Adjusted synchronously, so concurrent writes cannot lose an
  // update; a create counts as soon as it is issued, so a burst cannot overshoot.
  let queued = 0;
  /** Another node may have queued runs since (maybeQueued): the next claim looks. */
  let hinted = false;
  // Creates issued and not yet committed, and how many runs this store has queued so far
  // (created or requeued): a claim on PostgreSQL cannot see either kind, so a short claim keeps them counted (see claim()).
  let creating = 0;
  let created = 0;
  // The same two per org, for the per-org share of the queue (queuedOfOrg), kept only while they
  // count something: an org's creates in flight, and the creates committed while a count of its
  // queue is read (one tally per read). Kept for every org that ever queued a run, they grew with
  // the instance's orgs, deleted ones too.
  const creatingOf = new Map<number, number>();
  const readsOf = new Map<number, Set<{ committed: number }>>();
  const creatingBy = (org: number, by: number) => {
    const n = (creatingOf.get(org) ?? 0) + by;
    if (n > 0) creatingOf.set(org, n);
    else creatingOf.delete(org);
  };
  const countQueued = () => count("SELECT count(*) AS n FROM runs WHERE status = 'queued'");
  // Several nodes may share the database (PostgreSQL): claims race (claim()), counts are estimates.
  const shared = db.dialect === "postgres";
  /** Called after runs were queued (committed): other nodes are told (src/runs/queue-signal.ts). */
  const queuedListeners: (() => void)[] = [];
  const onQueued = () => {
    for (const f of queuedListeners) f();
  };

  return {
    /** Registers a function called after this store committed queued runs. */
    onQueued(f: () => void): void {
      queuedListeners.push(f);
    },
    /**
     * Submission and run in one transaction (grouped with others): both exist or neither does.
     * A run that was executing from memory when its client stopped waiting is written as running
     * (its first attempt), so a crash from then on requeues it like any other. Returns the
     * submission's id.
     */
    async create(n: NewRun, as?: { status: "running"; startedAt: string } & Claim): Promise<number> {
      const ts = n.createdAt ?? now();
      if (as) return batch.write(() => insertBoth(INSERT_RUN, n, ts, "running", as.startedAt, as));
      queued++;
      creating++;
      creatingBy(n.orgId, 1);
      try {
        const sid = await batch.write(() => insertBoth(INSERT_RUN, n, ts, "queued", null));
        created++;
        for (const read of readsOf.get(n.orgId) ?? []) read.committed++;
        onQueued();
        return sid;
      } catch (e) {
        queued--;
        throw e;
      } finally {
        creating--;
        creatingBy(n.orgId, -1);
      }
    },
    /**
     * A run executed from memory, written once in its final state (with the submission, and
     * `inTx` — the webhook outbox — in the same transaction). Returns the submission's id.
     */
    createFinal(n: NewRun, u: FinalUpdate & { startedAt: string }, inTx?: FinalTx): Promise<number> {
      try {
        const serialized = findings.serialize(u.steps);
        // The common run's findings are serialized synchronously: its write is issued in this
        // turn, and its promise is the batch's own (no async wrapper, whose return of a promise
        // costs turns of its own).
        return Array.isArray(serialized)
          ? writeFinalRun(n, u, inTx, serialized)
          : serialized.then((chunks) => writeFinalRun(n, u, inTx, chunks));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    /**
     * A run with at most `max` of its findings (first steps first; by default as many as a run
     * answer carries). Each step's findings_count says how many it has in all.
     */
    async get(orgId: number, id: string, max = RUN_FINDINGS_INLINE): Promise<Run | null> {
      const r = await db.exec(byId(id, orgId));
      return r ? findings.first(toRun(r), max) : null;
    },
    async getAnyOrg(id: string, max = RUN_FINDINGS_INLINE): Promise<Run | null> {
      const r = await db.exec(get<RunRow>(`${SELECT} WHERE r.id = CAST(? AS TEXT)`, id));
      return r ? findings.first(toRun(r), max) : null;
    },
    /** Findings [offset, offset + limit) of one step, by its index in the run's steps. */
    stepFindings: findings.page,
    async list(
      orgId: number,
      f: RunFilters,
      limit: number,
      offset: number,
    ): Promise<{ count: number; items: Run[] }> {
      const where = ["r.org_id = CAST(? AS INTEGER)"];
      const args: (string | number)[] = [orgId];
      if (f.workflowId !== undefined) {
        where.push("r.workflow_id = CAST(? AS INTEGER)");
        args.push(f.workflowId);
      }
      if (f.status) {
        where.push("r.status = CAST(? AS TEXT)");
        args.push(f.status);
      }
      if (f.createdAfter) {
        where.push("r.created_at >= CAST(? AS TEXT)");
        args.push(f.createdAfter);
      }
      if (f.createdBefore) {
        where.push("r.created_at < CAST(? AS TEXT)");
        args.push(f.createdBefore);
      }
      const w = where.join(" AND ");
      // The list indexes all lead with (org_id, [workflow_id,] status): without a status filter
      // the query has one arm per status, each read in index order, and the engine merges the
      // arms (SQLite: MERGE (UNION ALL); PostgreSQL: Merge Append), no sort: the page costs what
      // it did with an index per filter. The statuses are our constants, never input.
      const arms = f.status ? [null] : RUN_STATUSES;
      const armArgs = arms.flatMap(() => args);
      const arm = (st: RunStatus | null, cols: string) =>
        `SELECT ${cols} FROM runs r WHERE ${w}${st ? ` AND r.status = '${st}'` : ""}`;
      const countSql = `SELECT ${arms.map((st) => `(${arm(st, "count(*)")})`).join(" + ")} AS n`;
      // The page's ids are found inside the index first, then only those rows are joined: a deep
      // page no longer reads (and joins) every row it skips (last of 1M runs: 2.2–4.3 s → 144 ms).
      // The page drives the join in its own order, so SQLite needs no sort of the joined rows
      // (each ~2 KB with ten steps' summaries: −19 % for a page of 50, docs/benchmarks.md).
      const page = arms.map((st) => arm(st, "r.id AS id, r.created_at AS created_at")).join(" UNION ALL ");
      const pageSql = `SELECT ${COLUMNS} FROM (${page} ORDER BY created_at DESC, id DESC LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)) AS page JOIN runs r ON r.id = page.id ${JOINS} ORDER BY page.created_at DESC, page.id DESC`;
      const { count: n, rows } = await countedPage<RunRow>(db, {
        count: countSql,
        countParams: armArgs,
        page: pageSql,
        pageParams: [...armArgs, limit, offset],
        order: "p.created_at DESC, p.id DESC",
        key: "id",
      });
      // Step summaries only: a list never reads a finding (issue #19).
      return { count: n, items: rows.map(toRun) };
    },
    /** A run's submitted content for download: the bytes, or a stream of its slices. */
    async content(
      orgId: number,
      id: string,
    ): Promise<{
      body: Uint8Array | ReadableStream<Uint8Array> | null;
      content_type: string;
      charset: string;
      filename: string | null;
      file_type: FileType;
      sha256: string;
    } | null> {
      const row = await db.exec(
        get<{
          content: Uint8Array | null;
          content_chunks: number;
          content_type: string;
          charset: string;
          filename: string | null;
          file_type: FileType;
          sha256: string;
        }>(
          "SELECT s.content, s.content_chunks, s.content_type, s.charset, s.filename, s.file_type, s.sha256 FROM runs r JOIN submissions s ON s.id = r.submission_id WHERE r.id = CAST(? AS TEXT) AND r.org_id = CAST(? AS INTEGER)",
          id,
          orgId,
        ),
      );
      if (!row) return null;
      const { content, content_chunks, ...rest } = row;
      const slices = Number(content_chunks);
      return { ...rest, body: slices > 0 ? contents.stream(id, slices) : content };
    },
    /**
     * Writes a future run's content in slices before the run itself (content over 1 MiB);
     * create() then stores the run with `submission.slices` set.
     */
    writeContent: contents.write,
    removeContent: contents.remove,
    /**
     * The queue's depth as this server knows it: exact on SQLite (every status write goes
     * through this store); on PostgreSQL other nodes write too, so it is this node's count since
     * the last recount (refresh()), a bound for backpressure rather than an exact number.
     */
    queuedCount(): number {
      return Math.max(0, queued);
    },
    /** Orgs with a per-org count kept (creates in flight, counts of the queue being read): for tests. */
    orgsCounted(): number {
      return creatingOf.size + readsOf.size;
    },
    /**
     * One org's queued runs: those committed (counted in the database, every node's) plus this
     * store's creates of the org not committed yet, or committed since the count began (counted
     * twice rather than missed, as refresh() does for the whole queue). Resolves to a function
     * read in the same turn as the create that follows it, so concurrent requests see each
     * other's creates: a burst cannot overshoot the share. Another node's creates in flight are
     * its own to see.
     */
    async queuedOfOrg(orgId: number): Promise<() => number> {
      const read = { committed: 0 };
      const reads = readsOf.get(orgId) ?? new Set();
      readsOf.set(orgId, reads.add(read));
      const done = () => {
        reads.delete(read);
        if (!reads.size && readsOf.get(orgId) === reads) readsOf.delete(orgId);
      };
      let n: number;
      try {
        n = await db.exec(
          count("SELECT count(*) AS n FROM runs WHERE org_id = ? AND status = 'queued'", orgId),
        );
      } catch (e) {
        done();
        throw e;
      }
      // Read once, in the turn of the create that follows (service.ts): the tally ends there.
      return () => {
        done();
        return n + (creatingOf.get(orgId) ?? 0) + read.committed;
      };
    },
    /**
     * Whether the next claim should look at the queue: runs counted, or a change made elsewhere
     * (maybeQueued). Kept apart from the count, which backpressure reads: a hint of another
     * node's run is no run, and counting it refused a request with a full queue that was not.
     */
    async claimable(): Promise<boolean> {
      return queued > 0 || hinted;
    },
    /** Counts the queue again (PostgreSQL: other nodes add and take runs). */
    async refresh(): Promise<void> {
      const createdBefore = created;
      const n = await db.exec(countQueued());
      // PostgreSQL: runs of this node being written, or committed while the count ran, may be
      // missing from it; overwriting the count with it lost them until the next recount (seen in
      // CI: 2 runs queued on disk, 0 counted). Counted here instead: an excess is dropped by the
      // next claim that comes back short (claim()).
      queued = shared ? n + creating + (created - createdBefore) : n;
    },
    /** A change made elsewhere may have queued runs: the next claim looks even if the count is 0. */
    maybeQueued(): void {
      hinted = true;
    },
    /**
     * Claims up to `limit` queued runs for `claim.node` for `claim.leaseMs`: queued →
     * running, the attempt counted. Fair across orgs (docs/execution.md, fairPick): each run
     * to the org with the fewest in `busy` (this node's runs in flight, by org) plus those
     * picked so far, each org's oldest first. `idleOnly`: one run, of an org with none in `busy`. Another node may claim
     * the same run at once (PostgreSQL): the update takes only runs still queued, so each run
     * goes to one node. Urgent: workers wait. `executing`: runs this node's jobs are still on
     * (PostgreSQL), never claimed here: a node stopped past its lease comes back with its old job
     * running while another node's recovery queued the run again; claiming it would run it twice
     * in this process. It is claimed once that job has ended (its write refused), here or elsewhere.
     */
    async claim(
      limit: number,
      claim: Claim,
      busy: ReadonlyMap<number, number> = new Map(),
      idleOnly = false,
      executing: readonly string[] = [],
    ): Promise<{ id: string; attempts: number; org_id: number }[]> {
      const ts = now();
      const skip = shared ? executing : [];
      const notOurs = (col: string) =>
        skip.length ? ` AND ${col} NOT IN (${skip.map(() => "CAST(? AS TEXT)").join(", ")})` : "";
      const createdBefore = created;
      let heads = 0;
      const load = (r: ClaimedRow) => busy.get(Number(r.org_id)) ?? 0;
      const fair = (a: ClaimedRow, b: ClaimedRow) => load(a) - load(b) || byAge(a, b);
      const rows = await batch.write(function* (): Program<ClaimedRow[]> {
        // Each org's oldest queued run: one index seek per org (runs_org_status_created), not a
        // scan of the queue, which one org may have filled.
        const firsts = yield* all<ClaimedRow>(
          `SELECT h.id, h.org_id, h.created_at, h.attempts FROM orgs o JOIN runs h ON h.id = (SELECT r.id FROM runs r WHERE r.org_id = o.id AND r.status = 'queued'${notOurs("r.id")} ORDER BY r.created_at, r.id LIMIT 1)`,
          ...skip,
        );
        heads = firsts.length;
        const candidates = firsts.filter((r) => !idleOnly || load(r) === 0);
        // Fewer orgs with work than room (one org's backlog, the common case): their next
        // oldest runs too, so the queue is still claimed in groups, not one commit per run.
        // No org with a queued run (the count was an estimate, PostgreSQL): nothing more to look
        // for, and `IN ()` is no SQL there.
        const next =
          idleOnly || candidates.length === 0 || candidates.length >= limit
            ? []
            : yield* all<ClaimedRow>(
                `SELECT r.id, r.org_id, r.created_at, r.attempts FROM runs r WHERE r.status = 'queued' AND r.org_id IN (${candidates.map(() => "?").join(", ")}) AND r.id NOT IN (${candidates.map(() => "?").join(", ")})${notOurs("r.id")} ORDER BY r.created_at, r.id LIMIT CAST(? AS INTEGER)`,
                ...candidates.map((r) => r.org_id),
                ...candidates.map((r) => r.id),
                ...skip,
                (limit - candidates.length) * candidates.length,
              );
        const chosen = fairPick([...candidates, ...next], limit, load);
        if (!chosen.length) return [];
        const SET = `UPDATE runs SET status = 'running', started_at = ?, attempts = attempts + 1, node_id = ?, lease_until = ${leaseEnd}`;
        // PostgreSQL: rows another transaction holds (another node's claim, a cancel) are skipped,
        // never waited for: a wait held this node's whole dispatch.
        const ids = chosen.map(() => "?").join(", ");
        const pick = shared
          ? `id IN (SELECT id FROM runs WHERE status = 'queued' AND id IN (${ids}) FOR UPDATE SKIP LOCKED)`
          : `id IN (${ids})`;
        const got = yield* all<ClaimedRow>(
          `${SET} WHERE status = 'queued' AND ${pick} RETURNING id, attempts, org_id, created_at`,
          ts,
          claim.node,
          claim.leaseMs,
          ...chosen.map((r) => r.id),
        );
        // PostgreSQL: another node took some of them first (the update skips runs no longer
        // queued). The oldest runs no node is claiming make up the rest, so nodes do not all
        // wait for the next signal after a lost race.
        if (!shared || got.length === chosen.length || idleOnly) return got;
        const more = yield* all<ClaimedRow>(
          `${SET} WHERE status = 'queued' AND id IN (SELECT id FROM runs WHERE status = 'queued'${notOurs("id")} ORDER BY created_at, id LIMIT CAST(? AS INTEGER) FOR UPDATE SKIP LOCKED) RETURNING id, attempts, org_id, created_at`,
          ts,
          claim.node,
          claim.leaseMs,
          ...skip,
          chosen.length - got.length,
        );
        return [...got, ...more];
      }, true);
      // Runs another node queued are claimed here too: never below 0, or this node's next runs
      // would not count.
      queued = Math.max(0, queued - rows.length);
      if (!idleOnly) hinted = false;
      // PostgreSQL: no org with a queued run means the queue was empty in the claim's snapshot;
      // the count is an estimate there (other nodes claim too). Runs of this node the snapshot
      // could not see (still being written, or committed while the claim ran) stay counted:
      // otherwise the count reads 0 while they wait on disk until a signal or poll finds them.
      // SQLite's count is exact and may include runs of this very group not yet inserted.
      if (shared && heads === 0) queued = creating + (created - createdBefore);
      // Launched in the order chosen (the pool starts them in this order when it has room).
      return rows
        .sort(fair)
        .map(({ id, attempts, org_id }) => ({ id, attempts: Number(attempts), org_id: Number(org_id) }));
    },
    /** Extends this node's claims on the runs it executes; returns the ids it still holds. */
    async renew(ids: string[], claim: Claim): Promise<Set<string>> {
      if (!ids.length) return new Set();
      const rows = await db.exec(
        all<{ id: string }>(
          `UPDATE runs SET lease_until = ${leaseEnd} WHERE status = 'running' AND node_id = ? AND id IN (${ids.map(() => "?").join(", ")}) RETURNING id`,
          claim.leaseMs,
          claim.node,
          ...ids,
        ),
      );
      return new Set(rows.map((r) => r.id));
    },
    /** Back to the queue; `unstarted`: it never began, so the claim's attempt is given back. */
    async requeue(id: string, node: string, unstarted = false): Promise<void> {
      const back = unstarted ? ", attempts = attempts - 1" : "";
      const n = await batch.write(() =>
        run(
          `UPDATE runs SET status = 'queued', node_id = NULL, lease_until = NULL${back} WHERE id = ? AND status = 'running' AND (node_id IS NULL OR node_id = ?)`,
          id,
          node,
        ),
      );
      if (n) {
        queued++;
        created++;
        onQueued();
      }
    },
    /** The run as a worker needs it, its content read back a slice at a time when sliced. */
    async source(id: string): Promise<JobSource | null> {
      const row = await db.exec(
        get<SourceRow>(
          "SELECT r.id, r.org_id, r.status, r.attempts, r.workflow_id, r.workflow_version, s.file_type, s.charset, s.filename, s.content, s.content_chunks, s.size, r.steps, r.created_at FROM runs r JOIN submissions s ON s.id = r.submission_id WHERE r.id = CAST(? AS TEXT)",
          id,
        ),
      );
      if (!row) return null;
      const { content_chunks, size, ...src } = row;
      const slices = Number(content_chunks);
      if (slices > 0) src.content = await contents.read(id, slices, Number(size));
      return src;
    },
    /** Status, step list and start of a run, without its content (a cancel). */
    async state(id: string): Promise<{ status: RunStatus; steps: string; started_at: string | null } | null> {
      return db.exec(
        get<{ status: RunStatus; steps: string; started_at: string | null }>(
          "SELECT status, steps, started_at FROM runs WHERE id = CAST(? AS TEXT)",
          id,
        ),
      );
    },
    async status(id: string): Promise<RunStatus | null> {
      const r = await db.exec(get<{ status: RunStatus }>("SELECT status FROM runs WHERE id = ?", id));
      return r?.status ?? null;
    },
    /**
     * Writes the final state; `inTx` runs inside the same transaction (webhook outbox). With
     * `onlyIf`, nothing is written unless the run still has that status; returns whether it wrote.
     */
    async finish(
      id: string,
      u: FinalUpdate,
      inTx?: () => Program<void>,
      onlyIf?: RunStatus,
      node?: string,
    ): Promise<boolean> {
      // Only the executor finishes runs: a running one it holds, or (with onlyIf) a queued one it
      // cancels. A node whose claim was taken over (its lease ran out) writes nothing: neither
      // over a run recovery ended (given up: `error`, still naming that node) nor over one it put
      // back in the queue (its stopped job would otherwise end it `canceled`).
      const guard =
        node === undefined
          ? onlyIf
            ? ""
            : " AND status = 'running'"
          : onlyIf
            ? " AND (node_id IS NULL OR node_id = ?)"
            : " AND status = 'running' AND node_id = ?";
      const guardArgs = node === undefined ? [] : [node];
      const chunks = await findings.serialize(u.steps);
      const wrote = await batch.write(function* () {
        const args = [
          u.status,
          summariesJson(u.steps),
          u.summary ? JSON.stringify(u.summary) : null,
          u.error,
          u.finishedAt,
          u.durationMs,
          id,
        ] as const;
        const changed = onlyIf
          ? yield* run(`${FINISH} AND status = ?${guard}`, ...args, onlyIf, ...guardArgs)
          : yield* run(`${FINISH}${guard}`, ...args, ...guardArgs);
        if (changed) {
          // A run is finished once; rows of an earlier write would be stale, so none are kept.
          yield* findings.replace(id, chunks);
          if (inTx) yield* inTx();
        }
        return changed > 0;
      });
      if (wrote && onlyIf === "queued") queued--;
      return wrote;
    },
    /**
     * At start: runs a crash left running go back to the queue, or end in error after too many
     * attempts. `inTx` sees the runs ended in error inside the same transaction (webhook outbox).
     */
    async recover(
      maxAttempts: number,
      inTx?: (failed: GivenUpRun[]) => Program<void>,
    ): Promise<{ requeued: number; failed: GivenUpRun[] }> {
      const r = await db.tx(function* () {
        const ts = now();
        const why = `The run was interrupted ${maxAttempts} times (server crash or restart) and was given up.`;
        // One statement per status: each is served by its partial index (runs_queued, runs_running);
        // `status IN (…)` matches neither and scans every run ever made at each start.
        const giveUp = (status: string) =>
          all<GivenUpRun>(
            `UPDATE runs SET status = 'error', error = ?, finished_at = ? WHERE status = '${status}' AND attempts >= ? RETURNING id, org_id, workflow_id, finished_at`,
            why,
            ts,
            maxAttempts,
          );
        const failed = [...(yield* giveUp("queued")), ...(yield* giveUp("running"))];
        if (failed.length && inTx) yield* inTx(failed);
        const requeued = yield* run("UPDATE runs SET status = 'queued' WHERE status = 'running'");
        // Slices left without a run: after listening, a range at a time (src/runs/orphan-sweep.ts).
        return { requeued, failed, queued: yield* countQueued() };
      });
      queued = r.queued;
      return { requeued: r.requeued, failed: r.failed };
    },
    /**
     * Removes the orphan slices (content-store.ts removeOrphans) of one range of about `scan`
     * slices from `from`, below `before`; returns where the next range starts, null past the last.
     */
    async removeOrphanContent(
      from: string,
      before: string,
      scan?: number,
    ): Promise<{ removed: number; next: string | null }> {
      const to = await db.exec(contents.orphanRangeEnd(from, before, scan));
      const removed = await db.exec(contents.removeOrphans(from, to));
      return { removed, next: to === before ? null : to };
    },
    /**
     * Runs whose node stopped renewing its claim (it died, or lost the database for longer than a
     * lease) go back to the queue, or end in error after too many attempts. Safe on every node at
     * once: each row changes once (PostgreSQL re-checks the condition after a concurrent update).
     * `inTx` sees the runs ended in error, in the same transaction (webhook outbox).
     */
    async recoverExpired(
      maxAttempts: number,
      inTx?: (failed: GivenUpRun[]) => Program<void>,
      ownNode?: string,
    ): Promise<{ requeued: number; failed: GivenUpRun[] }> {
      // At a node's start, the runs it held in its previous life (same node id) are its own to
      // recover at once, without waiting for their claims to run out. A run without a lease was
      // left running by a build before leases (migration 9), stopped since: every run claimed
      // from then on has one (docs/deploy.md, "Upgrades checked from earlier builds").
      const expired = "(lease_until IS NULL OR lease_until < CAST(? AS TEXT))";
      const whose = ownNode === undefined ? expired : `(${expired} OR node_id = ?)`;
      const r = await db.tx(function* () {
        // Expired on the database's clock, never this node's (a node ahead saw live claims as run
        // out): read once, so that both statements judge by the same instant — on PostgreSQL as on
        // SQLite, whose 'now' is per statement. Not in the hot path: one pass per half lease.
        const ts = (yield* get<{ t: string }>(`SELECT ${dbNow(db.dialect)} AS t`))!.t;
        const whoseArgs = ownNode === undefined ? [ts] : [ts, ownNode];
        const why = `The run was interrupted ${maxAttempts} times (its server stopped or crashed) and was given up.`;
        const failed = yield* all<GivenUpRun>(
          `UPDATE runs SET status = 'error', error = ?, finished_at = ?, lease_until = NULL WHERE status = 'running' AND ${whose} AND attempts >= ? RETURNING id, org_id, workflow_id, finished_at`,
          why,
          ts,
          ...whoseArgs,
          maxAttempts,
        );
        if (failed.length && inTx) yield* inTx(failed);
        const requeued = yield* run(
          `UPDATE runs SET status = 'queued', node_id = NULL, lease_until = NULL WHERE status = 'running' AND ${whose}`,
          ...whoseArgs,
        );
        return { requeued, failed };
      });
      if (r.requeued) {
        queued += r.requeued;
        created += r.requeued;
        onQueued();
      }
      return r;
    },
  };
}
export type RunStore = ReturnType<typeof createRunStore>;
