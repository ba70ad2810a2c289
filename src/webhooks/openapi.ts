// The deliveries Assay sends, as the OpenAPI document's top-level `webhooks` map (OpenAPI 3.1):
// one `post` per event, with the body payload.ts builds, the headers dispatcher.ts and deliver.ts
// send, and what deliver.ts and dispatcher.ts make of the receiver's answer. The run is the `Run`
// component itself (a webhook sends the run as GET …/runs/{id}/ shows it, findings emptied), so
// the two cannot drift apart. test/openapi-webhooks.test.ts checks real deliveries against it.
import { RunOut } from "../runs/model.ts";
import { FINAL_STATUSES } from "../runs/types.ts";
import { EXCERPT_BYTES } from "./deliver.ts";
import { EVENTS, type WebhookEvent } from "./model.ts";

type Obj = Record<string, unknown>;

/** The final statuses each run event is sent for (payload.ts eventsForStatus). */
const STATUSES: Record<Exclude<WebhookEvent, "ping">, readonly string[]> = {
  "run.completed": FINAL_STATUSES,
  "run.succeeded": ["succeeded"],
  "run.failed": ["failed"],
  "run.error": ["error"],
};

const SUMMARIES: Record<WebhookEvent, string> = {
  "run.completed": "A run ended, whatever its final status",
  "run.succeeded": "A run succeeded",
  "run.failed": "A run failed: its document has errors",
  "run.error": "A run could not be completed (a step's error, a crash)",
  ping: "A test event, sent only when an Admin asks for it (POST …/webhooks/{id}/ping/)",
};

const timestamp = {
  type: "string",
  format: "date-time",
  description:
    "When the event happened: the run's finished_at (to the millisecond); for a ping, when it was queued. The webhook-timestamp header is when the attempt was made.",
};

function runBody(event: Exclude<WebhookEvent, "ping">, run: unknown): Obj {
  const statuses = STATUSES[event];
  return {
    type: "object",
    required: ["type", "timestamp", "data"],
    additionalProperties: false,
    properties: {
      type: { type: "string", const: event },
      timestamp,
      data: {
        type: "object",
        required: ["run"],
        additionalProperties: false,
        properties: {
          run: {
            description:
              "The run as GET …/runs/{id}/ shows it, with every step's `findings` emptied (the summary and each step's findings_count keep the counts; fetch the findings with a token). null only when the run no longer exists at the delivery's first attempt.",
            anyOf: [
              {
                allOf: [
                  run,
                  {
                    type: "object",
                    properties: {
                      status: statuses.length === 1 ? { const: statuses[0] } : { enum: [...statuses] },
                      steps: {
                        type: "array",
                        items: { type: "object", properties: { findings: { maxItems: 0 } } },
                      },
                    },
                  },
                ],
              },
              { type: "null" },
            ],
          },
        },
      },
    },
  };
}

const pingBody: Obj = {
  type: "object",
  required: ["type", "timestamp", "data"],
  additionalProperties: false,
  properties: {
    type: { type: "string", const: "ping" },
    timestamp,
    data: {
      type: "object",
      required: ["webhook"],
      additionalProperties: false,
      properties: {
        webhook: {
          type: "object",
          required: ["id", "url"],
          additionalProperties: false,
          properties: {
            id: { type: "integer", description: "The webhook's id" },
            url: { type: "string", description: "The URL the ping was queued for" },
          },
        },
      },
    },
  },
};

const HEADER_PARAMS = [
  "WebhookId",
  "WebhookTimestamp",
  "WebhookSignature",
  "WebhookUserAgent",
  "WebhookAcceptEncoding",
];

/** What Assay makes of the receiver's answer (deliver.ts, dispatcher.ts outcomeOf). */
const RESPONSES = {
  "2XX": {
    description: `Delivered. Only the status counts: at most the first ${EXCERPT_BYTES} bytes of the body are read, kept as the attempt's response_excerpt.`,
  },
  "410": {
    description:
      "Gone: the receiver asks to stop (Standard Webhooks). The delivery fails without retries and the webhook is deactivated (disabled_reason says why; PATCH is_active: true re-enables it).",
  },
  "429": {
    description: "Retried, no sooner than Retry-After when the answer has one.",
    headers: { "Retry-After": { $ref: "#/components/headers/WebhookRetryAfter" } },
  },
  "503": {
    description: "Retried, no sooner than Retry-After when the answer has one.",
    headers: { "Retry-After": { $ref: "#/components/headers/WebhookRetryAfter" } },
  },
  default: {
    description:
      "Any other answer, a 3xx included (redirects are not followed), no answer within ASSAY_WEBHOOK_TIMEOUT_MS (10 s), or no connection: the attempt failed and is retried after ASSAY_WEBHOOK_RETRY_DELAYS_MS (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, + up to 10 % jitter), and no sooner than the answer's Retry-After when it has one; after the last one the delivery is failed.",
    headers: { "Retry-After": { $ref: "#/components/headers/WebhookRetryAfter" } },
  },
};

/**
 * The `webhooks` map: `clean` is the document's schema pass (src/http/openapi/normalize.ts), which
 * turns the Run schema into its `$ref`.
 */
export function webhookEntries(clean: (schema: unknown) => unknown): Record<string, Obj> {
  const run = clean(RunOut);
  return Object.fromEntries(
    EVENTS.map((event) => [
      event,
      {
        post: {
          operationId:
            event === "ping"
              ? "pingWebhookEvent"
              : `${event.replace(/\.(\w)/, (_, c: string) => c.toUpperCase())}Event`,
          tags: ["Webhooks"],
          summary: SUMMARIES[event],
          description:
            "Sent to each active webhook of the run's organization subscribed to the event (and to the run's workflow, when it names workflows), signed per Standard Webhooks. At least once: deduplicate on webhook-id, which a retry or a redelivery keeps; every retry sends the same bytes. docs/webhooks.md.",
          security: [],
          parameters: HEADER_PARAMS.map((name) => ({ $ref: `#/components/parameters/${name}` })),
          requestBody: {
            required: true,
            content: { "application/json": { schema: event === "ping" ? pingBody : runBody(event, run) } },
          },
          responses: RESPONSES,
        },
      },
    ]),
  );
}
