// Shapes of the outbox: a delivery (one event for one webhook), its attempts, and what the
// dispatcher decides after an attempt.

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface Attempt {
  attempted_at: string;
  http_status: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

/** What the receiver asked for besides the status (not stored with the attempt). */
export interface ReceiverHints {
  /** Its Retry-After, in ms from now (any answer but a 2xx), capped at a day. */
  retryAfterMs: number | null;
}

export interface Delivery {
  id: string;
  webhook_id: number;
  event: string;
  run_id: string | null;
  status: DeliveryStatus;
  created_at: string;
  next_attempt_at: string | null;
  finished_at: string | null;
  attempts: Attempt[];
}

/** A delivery taken for an attempt, with what is needed to send it. */
export interface DueDelivery {
  id: string;
  webhook_id: number;
  event: string;
  run_id: string | null;
  payload: string | null;
  tries: number;
  created_at: string;
  /** This attempt's claim (src/webhooks/outbox-store.ts, DeliveryClaim). */
  claimed_by: string;
  claimed_at: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  org_id: number;
  org_slug: string;
}

export interface Outcome {
  status: DeliveryStatus;
  tries: number;
  /** The next attempt's delay (null: none), added to the database's time when it is recorded. */
  retryInMs: number | null;
  /** The endpoint is to be deactivated at once, with this reason (a 410 Gone). */
  deactivate?: string;
}

export interface DisablePolicy {
  afterFailures: number;
  afterMs: number;
}
