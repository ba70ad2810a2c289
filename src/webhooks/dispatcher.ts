// The delivery loop. It takes due deliveries from the outbox (leasing them), sends each attempt
// off the request path with a bounded number in flight, and sleeps until the next one is due or
// until woken by a new event. Everything it needs is in the database, so a restart loses nothing:
// at-least-once, since an attempt cut short is sent again.
import { type Logger, throttle } from "../lib/log.ts";
import type { RunStore } from "../runs/store.ts";
import { attempt } from "./deliver.ts";
import type { OutboxStore } from "./outbox-store.ts";
import type { Attempt, DueDelivery, Outcome, ReceiverHints } from "./types.ts";
import { runEventBody } from "./payload.ts";
import { signatureHeaders } from "./signing.ts";
import { VERSION } from "../version.ts";

/**
 * Attempts in flight on this node. Fairness between tenants is the claim's job (claim.ts: at most
 * 4 per endpoint and 8 per org, the org with the fewest first): this only bounds the node's
 * sockets, and is large enough that eight orgs each at their bound still leave room for a ninth.
 */
const MAX_IN_FLIGHT = 64;
const IDLE_RECHECK_MS = 60_000;
const PRUNE_EVERY_MS = 3_600_000;
const STOP_WAIT_MS = 2000;
const DAY_MS = 86_400_000;

export interface DispatcherOptions {
  timeoutMs: number;
  /** Delays before the 2nd, 3rd … attempt; after the last one the delivery is failed. */
  retryDelaysMs: number[];
  allowPrivate: boolean;
  disableAfterFailures: number;
  disableAfterDays: number;
  /** Finished deliveries older than this are forgotten. */
  retentionDays: number;
  /** This server's name: the deliveries it holds carry it. */
  node: string;
  /** Runs shared background work unless another node runs it (src/db/exclusive.ts). */
  exclusive?: (fn: () => Promise<unknown>) => Promise<boolean>;
  /** Longest sleep between two looks at the outbox (other nodes' deliveries become due too). */
  idleRecheckMs?: number;
}

/** "5000,300000,…" → [5000, 300000, …]; throws on anything else. */
export function parseRetryDelays(s: string): number[] {
  if (!/^\s*\d{1,10}(\s*,\s*\d{1,10})*\s*$/.test(s)) throw new Error(`invalid webhook retry delays "${s}"`);
  return s.split(",").map((x) => Number(x.trim()));
}

export function createWebhookDispatcher(
  outbox: OutboxStore,
  runs: RunStore,
  log: Logger,
  o: DispatcherOptions,
) {
  const inFlight = new Map<string, Promise<void>>();
  const shutdown = new AbortController();
  let origin = "";
  let closed = true;
  let passing: Promise<void> | null = null;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pruneTimer: ReturnType<typeof setInterval> | undefined;
  /** What the last claim counted as due: deliveries due by then that it left are held back. */
  let claimedAsOf = "";
  // A lease longer than any attempt: a delivery in flight is never taken twice.
  const leaseMs = o.timeoutMs + 30_000;
  const passFailed = throttle();
  /** What this server sent since start, for /metrics (each node counts its own). */
  const sent = { attempts: { succeeded: 0, failed: 0 }, deliveries: { succeeded: 0, failed: 0 } };

  function outcomeOf(d: DueDelivery, a: Attempt & ReceiverHints): Outcome {
    const tries = d.tries + 1;
    if (a.error === null) return { status: "succeeded", tries, retryInMs: null };
    // 410 Gone: the receiver asks to stop (Standard Webhooks): no retry, the endpoint is deactivated.
    if (a.http_status === 410)
      return {
        status: "failed",
        tries,
        retryInMs: null,
        deactivate:
          "Deactivated: the receiver answered 410 Gone, asking not to be sent deliveries any more. Once it wants them again, PATCH is_active: true.",
      };
    const delay = o.retryDelaysMs[tries - 1];
    if (delay === undefined) return { status: "failed", tries, retryInMs: null };
    // Up to 10 % jitter so that endpoints failing together are not retried in lockstep; never
    // sooner than the receiver's Retry-After (any non-2xx, up to a day: deliver.ts).
    const wait = Math.max(Math.round(delay * (1 + Math.random() * 0.1)), a.retryAfterMs ?? 0);
    return { status: "pending", tries, retryInMs: wait };
  }

  async function send(d: DueDelivery) {
    let body = d.payload;
    if (body === null) {
      body = await runEventBody(runs, origin, d);
      if (body === null)
        body = JSON.stringify({ type: d.event, timestamp: d.created_at, data: { run: null } });
      await outbox.setPayload(d.id, body);
    }
    const nowIso = new Date().toISOString();
    const secrets = [d.secret];
    if (d.previous_secret && d.previous_secret_expires_at && d.previous_secret_expires_at > nowIso)
      secrets.push(d.previous_secret);
    const headers = {
      "content-type": "application/json",
      "user-agent": `Assay-Webhooks/${VERSION}`,
      ...signatureHeaders(secrets, d.id, Math.floor(Date.now() / 1000), body),
    };
    const a = await attempt(d.url, headers, body, {
      timeoutMs: o.timeoutMs,
      allowPrivate: o.allowPrivate,
      shutdown: shutdown.signal,
    });
    if (!a) return outbox.release(d.id, d);
    const outcome = outcomeOf(d, a);
    const policy = { afterFailures: o.disableAfterFailures, afterMs: o.disableAfterDays * DAY_MS };
    const why = (streak: number) => {
      const days = o.disableAfterDays === 1 ? "1 day" : `${o.disableAfterDays} days`;
      return `Deactivated after ${streak} consecutive failed deliveries over at least ${days}; last attempt: ${a.error}. Fix the endpoint, then PATCH is_active: true.`;
    };
    let disabled: string | null | undefined;
    try {
      disabled = await outbox.recordAttempt(d.id, d, a, outcome, policy, why);
    } catch (e) {
      // The receiver's words are the only part the database may refuse (an encoding it cannot
      // store): the attempt is recorded without them rather than left to the lease, which would
      // send it again and again with nothing logged.
      log.warn("webhook attempt recorded without its response excerpt", { delivery: d.id, error: String(e) });
      disabled = await outbox.recordAttempt(d.id, d, { ...a, response_excerpt: null }, outcome, policy, why);
    }
    sent.attempts[a.error === null ? "succeeded" : "failed"]++;
    if (disabled === undefined) {
      // Deleted with its webhook meanwhile, or (several nodes) this node was stopped past its
      // lease and another node took the delivery over: that node records its own attempt
      // (at-least-once: the receiver may have had this one too).
      log.warn("webhook attempt not recorded: its delivery was removed or taken over meanwhile", {
        delivery: d.id,
      });
      return;
    }
    if (outcome.status !== "pending") sent.deliveries[outcome.status]++;
    if (disabled) log.warn("webhook deactivated", { webhook: d.webhook_id, reason: disabled });
  }

  function pass(): Promise<void> {
    if (closed) return Promise.resolve();
    if (passing) {
      again = true;
      return passing;
    }
    passing = passOnce().finally(() => {
      passing = null;
    });
    return passing;
  }

  async function passOnce(): Promise<void> {
    try {
      do {
        again = false;
        const room = MAX_IN_FLIGHT - inFlight.size;
        if (room <= 0) break;
        // Due and leased on the database's clock (src/db/clock.ts); asOf is its time.
        const { asOf, claimed } = await outbox.claimDue(room, leaseMs, o.node);
        claimedAsOf = asOf;
        for (const d of claimed) {
          if (closed) {
            await outbox.release(d.id, d);
            continue;
          }
          const p = send(d)
            .catch((e) => log.error("webhook delivery failed", { delivery: d.id, error: String(e) }))
            .finally(() => {
              inFlight.delete(d.id);
              void pass();
            });
          inFlight.set(d.id, p);
        }
      } while (again && !closed);
      if (!closed) await arm();
    } catch (e) {
      // Once a second while the database is away: said once a minute, with the count.
      passFailed("pass", (r) => log.error("webhook dispatcher pass failed", { error: String(e), ...r }));
      if (!closed) timer = setTimeout(() => void pass(), 1000);
    }
  }

  /** Sleep until the next delivery is due (re-checked at least every minute). */
  async function arm() {
    clearTimeout(timer);
    if (inFlight.size >= MAX_IN_FLIGHT) return; // each finishing attempt runs a pass
    // Deliveries the last claim left although due were held back by the bounds in flight: an
    // attempt ending runs a pass (on another node, the idle recheck does); looking again at once
    // would find them held back still, in a loop.
    const next = await outbox.nextDue(claimedAsOf);
    const idle = o.idleRecheckMs ?? IDLE_RECHECK_MS;
    const wait = next ?? idle;
    timer = setTimeout(() => void pass(), Math.min(wait, idle));
  }

  async function prune() {
    try {
      const run = o.exclusive ?? ((fn: () => Promise<unknown>) => fn().then(() => true));
      await run(async () => {
        const removed = await outbox.prune(new Date(Date.now() - o.retentionDays * DAY_MS).toISOString());
        if (removed) log.info("pruned webhook deliveries", { removed });
      });
    } catch (e) {
      log.error("pruning webhook deliveries failed", { error: String(e) });
    }
  }

  return {
    /** `publicOrigin` is used for run URLs in event bodies. */
    async start(publicOrigin: string) {
      origin = publicOrigin;
      closed = false;
      const released = await outbox.releaseClaims(o.node);
      if (released) log.info("webhook attempts interrupted by a stop will be resent", { released });
      void prune();
      pruneTimer = setInterval(() => void prune(), PRUNE_EVERY_MS);
      void pass();
    },
    /** New deliveries were committed: look now rather than at the next timer. */
    wake() {
      if (!closed) void pass();
    },
    /**
     * Waits for attempts in flight (at most graceMs, capped at STOP_WAIT_MS: an aborted attempt is
     * only sent again after the restart), then aborts the rest.
     */
    async stop(graceMs: number) {
      closed = true;
      clearTimeout(timer);
      clearInterval(pruneTimer);
      await passing;
      const all = Promise.allSettled([...inFlight.values()]);
      await Promise.race([all, Bun.sleep(Math.min(graceMs, STOP_WAIT_MS))]);
      shutdown.abort();
      await all;
    },
    stats: () => ({
      inFlight: inFlight.size,
      attempts: { ...sent.attempts },
      deliveries: { ...sent.deliveries },
    }),
  };
}
export type WebhookDispatcher = ReturnType<typeof createWebhookDispatcher>;
