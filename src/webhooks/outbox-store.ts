// SQL for the delivery outbox and its attempt log. A delivery is `pending` until a 2xx
// (`succeeded`) or the last retry (`failed`); `next_attempt_at` says when it is due.
import { SYSTEM } from "../audit/actor.ts";
import { audit } from "../audit/append.ts";
import { dbNow, dbTimeIn } from "../db/clock.ts";
import { type Db, type Program, all, count, get, run } from "../db/program.ts";
import { now, parseJson } from "../db/util.ts";
import { newMessageId } from "./signing.ts";
import { auditUrl } from "./store.ts";
import { createSubscriptions } from "./subscriptions.ts";
import type { Attempt, Delivery, DisablePolicy, DueDelivery, Outcome } from "./types.ts";
import { type Bounds, DEFAULT_BOUNDS, shareClaims } from "./claim.ts";

/**
 * The workflow's slug and the org's webhook filters in one statement: a rename writes both in one
 * transaction (src/webhooks/store.ts, renameInFilters), and one statement sees both before it or
 * both after it, also on PostgreSQL, where the subscriptions read earlier in the transaction is
 * another snapshot. Compared with that read's filters, a rename committed in between left the run
 * without its delivery (2026-11-29).
 */
function* slugAndFilters(
  orgId: number,
  workflowId: number,
): Program<{ slug: string; filters: Map<number, string[]> }> {
  const rows = yield* all<{ id: number | string; workflow_slugs: string; slug: string | null }>(
    "SELECT h.id, h.workflow_slugs, (SELECT w.slug FROM workflows w WHERE w.id = CAST(? AS INTEGER)) AS slug FROM webhooks h WHERE h.org_id = CAST(? AS INTEGER)",
    workflowId,
    orgId,
  );
  return {
    slug: rows[0]?.slug ?? "",
    filters: new Map(rows.map((r) => [Number(r.id), parseJson<string[]>(r.workflow_slugs, [])])),
  };
}

/** Attempts kept per delivery: redelivering again and again must not grow the log forever. */
const MAX_ATTEMPTS_KEPT = 50;

type DeliveryRow = Omit<Delivery, "attempts">;

/** Key of the advisory lock that makes claims take turns across nodes ("ASWHCL"). */
const CLAIM_LOCK = 0x41_53_57_48_43_4c;

interface EndpointRow {
  webhook_id: number | string;
  org_id: number | string;
  is_active: number | string;
  due: number | string;
  busy: number | string;
  oldest: string | null;
}

/**
 * Every endpoint with a pending delivery: its oldest due delivery, its attempts in flight on any
 * node (a lease not yet run out) and its due deliveries, counted up to the bound (binds: now,
 * now, now, the bound). The endpoints are found by skipping through the pending index one
 * webhook_id at a time (a loose index scan), and everything else is a seek per endpoint
 * (migration 17): the cost grows with the endpoints that have work, not with a backlog.
 * An endpoint of a suspended or deleted org counts as inactive: its pending deliveries wait for a
 * restore, as they wait for an inactive webhook's reactivation (docs/webhooks.md).
 */
const ENDPOINT_LOADS = `WITH RECURSIVE pending(webhook_id) AS (
    SELECT (SELECT min(webhook_id) FROM webhook_deliveries WHERE status = 'pending')
    UNION ALL
    SELECT (SELECT min(x.webhook_id) FROM webhook_deliveries x WHERE x.status = 'pending' AND x.webhook_id > p.webhook_id)
    FROM pending p WHERE p.webhook_id IS NOT NULL
  )
  SELECT w.id AS webhook_id, w.org_id,
    CASE WHEN w.is_active = 1 AND o.status = 'active' AND o.deleted_at IS NULL THEN 1 ELSE 0 END AS is_active,
    (SELECT min(d.next_attempt_at) FROM webhook_deliveries d
      WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= CAST(? AS TEXT)) AS oldest,
    (SELECT count(*) FROM webhook_deliveries c
      WHERE c.webhook_id = w.id AND c.claimed_at IS NOT NULL AND c.next_attempt_at > CAST(? AS TEXT) AND c.status = 'pending') AS busy,
    (SELECT count(*) FROM (SELECT 1 AS one FROM webhook_deliveries d
      WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= CAST(? AS TEXT)
      LIMIT CAST(? AS INTEGER)) AS firsts) AS due
  FROM pending p JOIN webhooks w ON w.id = p.webhook_id JOIN orgs o ON o.id = w.org_id`;
/**
 * An attempt's claim on its delivery. A node stopped (SIGSTOP, a long pause) past its lease finds
 * the delivery taken over by another node, whose attempt may be in flight: its own outcome must
 * not clear that claim (a third attempt would start beside the second) nor set `tries` back. A
 * claim is the node and the moment it claimed: the same node may claim the delivery again later.
 */
export type DeliveryClaim = { claimed_by: string; claimed_at: string };
const OWN_CLAIM = " AND claimed_by = CAST(? AS TEXT) AND claimed_at = CAST(? AS TEXT)";
// While an attempt is under way its row's next_attempt_at holds the claim's lease end (when
// another node may take it over): what a reader is told is when the attempt began.
const COLUMNS =
  "id, webhook_id, event, run_id, status, created_at, CASE WHEN claimed_at IS NULL THEN next_attempt_at ELSE claimed_at END AS next_attempt_at, finished_at";

export function createOutboxStore(db: Db) {
  // Claims skip rows another transaction holds (PostgreSQL); SQLite has one writer and no such rows.
  const skipLocked = db.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
  const serialize = db.dialect === "postgres";
  // When a delivery is due and when a claim's lease ends (both in next_attempt_at) are written and
  // compared on the database's clock (src/db/clock.ts): every node's claims judge the same times,
  // so one node's skew cannot take over an attempt in flight or hold a dead node's delivery back.
  // created_at and finished_at stay the writing node's (what an admin reads).
  const NOW = dbNow(db.dialect);
  const NOW_PLUS = dbTimeIn(db.dialect);
  // The claim's first statement reads the time it judges by: on PostgreSQL the statement that
  // takes the claims' advisory lock (no round trip of its own). Its start, before any wait for
  // the lock: a few ms early at most, so a claim never sees a delivery due before its time.
  const CLAIM_START = serialize
    ? `SELECT pg_advisory_xact_lock(${CLAIM_LOCK}) AS locked, ${NOW} AS now`
    : `SELECT ${NOW} AS now`;
  const subscriptions = createSubscriptions(db);
  const insert = (
    id: string,
    webhookId: number,
    type: string,
    runId: string | null,
    payload: string | null,
    ts: string,
  ) =>
    get<DeliveryRow>(
      `INSERT INTO webhook_deliveries (id, webhook_id, event, run_id, payload, status, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ${NOW}, ?) RETURNING ${COLUMNS}`,
      id,
      webhookId,
      type,
      runId,
      payload,
      ts,
    );
  function* withAttempts(rows: DeliveryRow[]): Program<Delivery[]> {
    const by = new Map<string, Attempt[]>(rows.map((r) => [r.id, []]));
    if (rows.length) {
      const ids = rows.map((r) => r.id);
      const found = yield* all<Attempt & { delivery_id: string }>(
        `SELECT delivery_id, attempted_at, http_status, duration_ms, error, response_excerpt FROM webhook_attempts WHERE delivery_id IN (${ids.map(() => "?").join(", ")}) ORDER BY id`,
        ...ids,
      );
      for (const { delivery_id, ...a } of found) by.get(delivery_id)?.push(a);
    }
    return rows.map((r) => ({ ...r, attempts: by.get(r.id) ?? [] }));
  }

  return {
    /** No active webhook for the org, as of the reads returned (subscriptions.ts, quiet); null: maybe some. */
    quiet: (orgId: number) => subscriptions.quiet(orgId),
    /** Inside a final transaction: no active webhook for the org, as that transaction read already. */
    idle: (orgId: number) => subscriptions.idle(orgId),
    /**
     * A program run INSIDE the transaction that writes a run's final status, so the outbox rows
     * and the status commit together (or not at all). Returns the deliveries it enqueued.
     */
    *enqueueRunEvents(
      orgId: number,
      workflowId: number,
      runId: string,
      types: readonly string[],
      /** The run's finished_at: the body's `timestamp` says when the run ended, not when this ran. */
      ts: string,
    ): Program<number> {
      // Kept in memory on SQLite, exact (src/webhooks/subscriptions.ts): most runs stop here.
      const hooks = yield* subscriptions.of(orgId);
      if (!hooks.length) return 0;
      let named: { slug: string; filters: Map<number, string[]> } | undefined;
      let n = 0;
      for (const h of hooks) {
        if (h.workflowSlugs.length) {
          named ??= yield* slugAndFilters(orgId, workflowId);
          const slugs = named.filters.get(h.id) ?? h.workflowSlugs;
          if (slugs.length && !slugs.includes(named.slug)) continue;
        }
        for (const type of types) {
          if (!h.events.includes(type)) continue;
          yield* insert(newMessageId(), h.id, type, runId, null, ts);
          n++;
        }
      }
      return n;
    },
    /** A delivery with a ready body (ping); `logged` writes its audit entry in the same transaction. */
    async enqueue(
      webhookId: number,
      event: string,
      payload: string,
      logged: (d: { id: string }) => Program<unknown>,
    ): Promise<Delivery> {
      const row = await db.tx(function* () {
        const r = yield* insert(newMessageId(), webhookId, event, null, payload, now());
        yield* logged(r!);
        return r;
      });
      return { ...row!, attempts: [] };
    },
    async list(
      webhookId: number,
      limit: number,
      offset: number,
    ): Promise<{ count: number; items: Delivery[] }> {
      return db.read(
        (function* () {
          const n = yield* count(
            "SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ?",
            webhookId,
          );
          const rows = yield* all<DeliveryRow>(
            `SELECT ${COLUMNS} FROM webhook_deliveries WHERE webhook_id = CAST(? AS INTEGER) ORDER BY created_at DESC, id DESC LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
            webhookId,
            limit,
            offset,
          );
          return { count: n, items: yield* withAttempts(rows) };
        })(),
      );
    },
    async get(webhookId: number, id: string): Promise<Delivery | null> {
      return db.read(
        (function* () {
          const row = yield* get<DeliveryRow>(
            `SELECT ${COLUMNS} FROM webhook_deliveries WHERE webhook_id = ? AND id = ?`,
            webhookId,
            id,
          );
          return row ? (yield* withAttempts([row]))[0]! : null;
        })(),
      );
    },
    /** A finished delivery goes back to the outbox with a fresh retry schedule; null if pending. */
    async redeliver(
      webhookId: number,
      id: string,
      logged: (d: { id: string; status: string }) => Program<unknown>,
    ): Promise<Delivery | null> {
      return db.tx(function* () {
        const before = yield* get<{ status: string }>(
          "SELECT status FROM webhook_deliveries WHERE webhook_id = ? AND id = ?",
          webhookId,
          id,
        );
        const row = yield* get<DeliveryRow>(
          `UPDATE webhook_deliveries SET status = 'pending', tries = 0, next_attempt_at = ${NOW}, finished_at = NULL WHERE webhook_id = ? AND id = ? AND status <> 'pending' RETURNING ${COLUMNS}`,
          webhookId,
          id,
        );
        if (!row) return null;
        yield* logged({ id, status: before!.status });
        return (yield* withAttempts([row]))[0]!;
      });
    },
    /**
     * At start: attempts a crash (or kill) left in flight are due again at once — on SQLite all
     * of them (one node), on PostgreSQL those of this node's previous life (the same node id):
     * other nodes' claims are left alone, and a dead node's are taken over when their lease runs
     * out (the delivery is due again then).
     */
    async releaseClaims(node: string): Promise<number> {
      const mine = db.dialect === "postgres" ? " AND claimed_by = ?" : "";
      return db.exec(
        run(
          `UPDATE webhook_deliveries SET claimed_at = NULL, claimed_by = NULL, next_attempt_at = ${NOW} WHERE status = 'pending' AND claimed_at IS NOT NULL${mine}`,
          ...(mine ? [node] : []),
        ),
      );
    },
    /**
     * Takes up to `limit` due deliveries of active webhooks for `node`, leasing them for `leaseMs`
     * (longer than any attempt): no delivery is attempted by two nodes at once. The slots are
     * shared fairly (src/webhooks/claim.ts): an endpoint and an org never have more than `bounds`
     * in flight over all nodes, and the org with the fewest in flight goes first. `asOf`: the
     * database's time that counted as now (what was due; the lease runs from it).
     */
    async claimDue(
      limit: number,
      leaseMs: number,
      node = "node",
      bounds: Bounds = DEFAULT_BOUNDS,
    ): Promise<{ asOf: string; claimed: DueDelivery[] }> {
      return db.tx(function* () {
        // PostgreSQL: one claim at a time over all nodes, so the counts in flight it reads are
        // not changed by another node's claim before this one commits (a few ms; a claim waits
        // for another, never for an attempt). Released at commit.
        const asOf = (yield* get<{ now: string }>(CLAIM_START))!.now;
        const leaseUntil = new Date(Date.parse(asOf) + leaseMs).toISOString();
        const loads = yield* all<EndpointRow>(ENDPOINT_LOADS, asOf, asOf, asOf, bounds.perEndpoint);
        const shares = shareClaims(
          loads
            .filter((l) => Number(l.is_active) === 1 || Number(l.busy) > 0)
            .map((l) => ({
              webhookId: Number(l.webhook_id),
              orgId: Number(l.org_id),
              due: Number(l.is_active) === 1 ? Number(l.due) : 0,
              busy: Number(l.busy),
              oldest: l.oldest,
            })),
          limit,
          bounds,
        );
        const ids: string[] = [];
        for (const [webhookId, n] of shares) {
          const taken = yield* all<{ id: string }>(
            `UPDATE webhook_deliveries SET claimed_at = CAST(? AS TEXT), claimed_by = CAST(? AS TEXT), next_attempt_at = CAST(? AS TEXT) WHERE id IN (SELECT id FROM webhook_deliveries WHERE webhook_id = CAST(? AS INTEGER) AND status = 'pending' AND next_attempt_at <= CAST(? AS TEXT) ORDER BY next_attempt_at, id LIMIT CAST(? AS INTEGER)${skipLocked}) RETURNING id`,
            asOf,
            node,
            leaseUntil,
            webhookId,
            asOf,
            n,
          );
          ids.push(...taken.map((r) => r.id));
        }
        if (!ids.length) return { asOf, claimed: [] };
        const claimed = yield* all<DueDelivery>(
          `SELECT d.id, d.webhook_id, d.event, d.run_id, d.payload, d.tries, d.created_at, d.claimed_by, d.claimed_at, w.url, w.secret,
             w.previous_secret, w.previous_secret_expires_at, w.org_id, o.slug AS org_slug
           FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN orgs o ON o.id = w.org_id
           WHERE d.id IN (${ids.map(() => "CAST(? AS TEXT)").join(", ")})`,
          ...ids,
        );
        return { asOf, claimed };
      });
    },
    /**
     * In how many ms (0: now) the next pending delivery of an active webhook becomes due after
     * `after` (the last claim's `asOf`); null if none. Deliveries due by then that the claim left
     * were held back by the bounds in flight: an attempt ending (here, or on another node: the
     * idle recheck) frees them, so they must not make the dispatcher look again at once, over and
     * over. Counted on the database's clock: a node ahead would otherwise find it due at once, and
     * look again and again until the database's time caught up.
     */
    async nextDue(after = ""): Promise<number | null> {
      const r = await db.exec(
        get<{ t: string | null; now: string }>(
          `SELECT min(d.next_attempt_at) AS t, ${NOW} AS now FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN orgs o ON o.id = w.org_id WHERE d.status = 'pending' AND d.next_attempt_at > CAST(? AS TEXT) AND w.is_active = 1 AND o.status = 'active' AND o.deleted_at IS NULL`,
          after,
        ),
      );
      return r?.t ? Math.max(0, Date.parse(r.t) - Date.parse(r.now)) : null;
    },
    async setPayload(id: string, payload: string): Promise<void> {
      await db.exec(run("UPDATE webhook_deliveries SET payload = ? WHERE id = ?", payload, id));
    },
    /** An attempt cut short by shutdown: due again at once, nothing logged (if still this claim's). */
    async release(id: string, claim: DeliveryClaim): Promise<void> {
      await db.exec(
        run(
          `UPDATE webhook_deliveries SET claimed_at = NULL, claimed_by = NULL, next_attempt_at = ${NOW} WHERE id = ? AND status = 'pending'${OWN_CLAIM}`,
          id,
          claim.claimed_by,
          claim.claimed_at,
        ),
      );
    },
    /**
     * Logs an attempt and applies its outcome. A delivery ending `failed` extends the webhook's
     * failure streak; past the policy the webhook is deactivated with `reason`, and at once with
     * the outcome's own reason when it has one (a 410 Gone). Returns the reason when it did that,
     * null otherwise; `undefined` when the claim was no longer this attempt's (nothing written).
     */
    async recordAttempt(
      id: string,
      claim: DeliveryClaim,
      a: Attempt,
      o: Outcome,
      policy: DisablePolicy,
      reason: (streak: number) => string,
    ): Promise<string | null | undefined> {
      return db.tx(function* () {
        const ts = now();
        const d = yield* get<{ webhook_id: number; created_at: string }>(
          `UPDATE webhook_deliveries SET status = ?, tries = ?, next_attempt_at = ${NOW_PLUS}, claimed_at = NULL, claimed_by = NULL, finished_at = ? WHERE id = ? AND status = 'pending'${OWN_CLAIM} RETURNING webhook_id, created_at`,
          o.status,
          o.tries,
          o.retryInMs,
          o.status === "pending" ? null : ts,
          id,
          claim.claimed_by,
          claim.claimed_at,
        );
        // Deleted with its webhook, finished, or taken over by another node meanwhile.
        if (!d) return undefined;
        yield* run(
          "INSERT INTO webhook_attempts (delivery_id, attempted_at, http_status, duration_ms, error, response_excerpt) VALUES (?, ?, ?, ?, ?, ?)",
          id,
          a.attempted_at,
          a.http_status,
          a.duration_ms,
          a.error,
          a.response_excerpt,
        );
        yield* run(
          "DELETE FROM webhook_attempts WHERE delivery_id = CAST(? AS TEXT) AND id NOT IN (SELECT id FROM webhook_attempts WHERE delivery_id = CAST(? AS TEXT) ORDER BY id DESC LIMIT CAST(? AS INTEGER))",
          id,
          id,
          MAX_ATTEMPTS_KEPT,
        );
        if (o.status === "succeeded")
          yield* run(
            "UPDATE webhooks SET failed_streak = 0, failing_since = NULL WHERE id = ?",
            d.webhook_id,
          );
        if (o.status !== "failed") return null;
        const w = (yield* get<{ failed_streak: number; failing_since: string; is_active: number }>(
          "UPDATE webhooks SET failed_streak = failed_streak + 1, failing_since = coalesce(failing_since, ?) WHERE id = ? RETURNING failed_streak, failing_since, is_active",
          d.created_at,
          d.webhook_id,
        ))!;
        const span = Date.parse(ts) - Date.parse(w.failing_since);
        if (!w.is_active) return null;
        // A 410 Gone asks to stop at once; otherwise the streak and its span decide.
        if (!o.deactivate && (w.failed_streak < policy.afterFailures || span < policy.afterMs)) return null;
        const why = o.deactivate ?? reason(w.failed_streak);
        const off = (yield* get<{ org_id: number | string; url: string }>(
          "UPDATE webhooks SET is_active = 0, disabled_reason = ?, disabled_at = ?, updated_at = ? WHERE id = ? RETURNING org_id, url",
          why,
          ts,
          ts,
          d.webhook_id,
        ))!;
        // Logged as an Admin's deactivation would be, by the system: "who turned it off?" is
        // answered by the log too, not only by the webhook's disabled_reason (until 2026-11-29
        // this change wrote no entry).
        yield* audit(SYSTEM, {
          action: "webhook.update",
          org_id: Number(off.org_id),
          target_type: "webhook",
          target_id: d.webhook_id,
          target_name: auditUrl(off.url),
          before: { is_active: true },
          after: { is_active: false },
          context: { reason: why },
        });
        return why;
      });
    },
    /** Forgets finished deliveries (and their attempts) older than `before`. */
    async prune(before: string): Promise<number> {
      return db.exec(
        run("DELETE FROM webhook_deliveries WHERE status <> 'pending' AND finished_at < ?", before),
      );
    },
  };
}
export type OutboxStore = ReturnType<typeof createOutboxStore>;
