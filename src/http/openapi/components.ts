import type { DocumentDecoration } from "elysia";

// The shared parts of the OpenAPI document: tags, security schemes, the request headers a route
// can declare (components.parameters), the answer headers (components.headers) and one response
// per error status (components.responses). Routes refer to them with the helpers at the end.

/** Every tag an operation may use, in the order the docs page shows them. */
export const TAGS = [
  { name: "Runs", description: "Submit data to a workflow, read runs, their findings and reports." },
  {
    name: "Workflows",
    description: "Validation workflows: ordered steps, each a validator with its config (Author writes).",
  },
  { name: "Schemas", description: "JSON Schemas stored in an organization, for steps to $ref by URI." },
  { name: "Validators", description: "The catalogue of validators and the JSON Schema of each config." },
  { name: "Webhooks", description: "Signed notifications of finished runs, their delivery log (Admin)." },
  { name: "Organizations", description: "Organizations you belong to, and their members and roles." },
  { name: "Users", description: "The authenticated user." },
  { name: "Tokens", description: "Your API tokens: the secret is shown once, at creation." },
  { name: "Administration", description: "Instance administration: users, organizations, settings." },
  {
    name: "Audit",
    description:
      "The audit log of every change, with a hash chain (org Admins: their org; instance admins: all).",
  },
  {
    name: "Web session",
    description: "Cookie sign-in for the web app; API clients use a bearer token instead.",
  },
  { name: "Health", description: "Probes and metrics for operators." },
] as const;
export type Tag = (typeof TAGS)[number]["name"];

export const SECURITY_SCHEMES = {
  bearer: {
    type: "http",
    scheme: "bearer",
    description:
      "An API token (assay_…): `Authorization: Bearer <token>`. Create one with `assay tokens create` or POST /api/v1/users/me/tokens/.",
  },
  session: {
    type: "apiKey",
    in: "cookie",
    name: "assay_session",
    description:
      "The web app's session cookie (POST /api/v1/auth/login/): `assay_session` over plain HTTP, `__Host-assay_session` over HTTPS (only that name is read there); writes also need the X-CSRF-Token header. Same origin only.",
  },
};

const str = (description: string, extra: Record<string, unknown> = {}) => ({
  description,
  schema: { type: "string", ...extra },
});

/** Request headers, under components.parameters. */
export const PARAMETERS = {
  Prefer: {
    name: "Prefer",
    in: "header",
    required: false,
    description:
      "`respond-async`: answer 202 at once; `wait=N`: wait up to N seconds (at most 60) for the run to finish before answering 202 (RFC 7240). Honoured preferences are echoed in Preference-Applied.",
    schema: { type: "string", examples: ["respond-async", "wait=10"] },
  },
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "A key of your choice (1 to 255 visible ASCII characters, no spaces; else 400): the same key and the same request within 24 h replay the first answer with Idempotent-Replayed: true; the same key with another request is 422.",
    // src/runs/service.ts IDEMPOTENCY_KEY_RE
    schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[!-~]+$" },
  },
  XFilename: {
    name: "X-Filename",
    in: "header",
    required: false,
    description: "Raw mode: the submitted file's name (no path separators or control characters).",
    schema: { type: "string", maxLength: 255 },
  },
  ContentEncoding: {
    name: "Content-Encoding",
    in: "header",
    required: false,
    description: "Raw mode: `base64` when the body is the payload in base64 (decoded before it is stored).",
    schema: { type: "string", enum: ["base64", "identity"] },
  },
  XSubmissionMode: {
    name: "X-Submission-Mode",
    in: "header",
    required: false,
    description:
      "Overrides the mode guess for an application/json body: `raw` (the body is the document) or `envelope` ({content, …}). `envelope` with another Content-Type than application/json or multipart/form-data, or `raw` with multipart/form-data, is a 415.",
    schema: { type: "string", enum: ["raw", "envelope"] },
  },
  IfMatch: {
    name: "If-Match",
    in: "header",
    required: false,
    description:
      'The ETag of the workflow as read (`"7"`, its version), or `*`: the change is made only if the workflow is still at that version, else 412 precondition_failed (RFC 9110 §13.1.1; a weak W/ tag never matches).',
    schema: { type: "string", examples: ['"7"'] },
  },
  IfMatchRead: {
    name: "If-Match",
    in: "header",
    required: false,
    description:
      'The ETag of the workflow (`"7"`), or `*`: the workflow is answered only while it is at that version, else 412 precondition_failed (RFC 9110 §13.1.1; judged before If-None-Match; a weak W/ tag never matches).',
    schema: { type: "string", examples: ['"7"'] },
  },
  IfNoneMatch: {
    name: "If-None-Match",
    in: "header",
    required: false,
    description:
      'The ETag of the workflow as read (`"7"`, or `W/"7"`), or `*`: while the workflow is still at that version the answer is 304 Not Modified, without a body (RFC 9110 §13.1.2).',
    schema: { type: "string", examples: ['"7"'] },
  },
  IfMatchTagged: {
    name: "If-Match",
    in: "header",
    required: false,
    description:
      "An ETag this answer gave (or `*`): the answer is sent only while it still has that tag, else 412 precondition_failed (RFC 9110 §13.1.1; judged before If-None-Match; a weak W/ tag never matches).",
    schema: { type: "string" },
  },
  IfNoneMatchTagged: {
    name: "If-None-Match",
    in: "header",
    required: false,
    description:
      "The ETag of the copy the client holds (or `W/` it, or a list, or `*`): while it is still the current one the answer is 304 Not Modified, without a body (RFC 9110 §13.1.2).",
    schema: { type: "string" },
  },
  IfNoneMatchEdit: {
    name: "If-None-Match",
    in: "header",
    required: false,
    description:
      'An ETag (`"7"`, or `W/"7"`) or `*`: when it names the workflow\'s current version, or is `*`, nothing is changed and the answer is 412 precondition_failed (RFC 9110 §13.1.2).',
    schema: { type: "string", examples: ["*"] },
  },
  // The headers of a webhook delivery (src/webhooks/dispatcher.ts, signing.ts, deliver.ts): the
  // `webhooks` map's operations refer to them.
  WebhookId: {
    name: "webhook-id",
    in: "header",
    required: true,
    description:
      "The delivery's id (msg_…, the Delivery's `id`): the same for every retry and redelivery of it, so deduplicate on it.",
    schema: { type: "string", pattern: "^msg_[0-9a-f]{32}$" },
  },
  WebhookTimestamp: {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description:
      "When this attempt was made, in Unix seconds: signed, so refuse one too far from your clock (Standard Webhooks suggests 5 minutes).",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  WebhookSignature: {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      "`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed with the base64-decoded secret after `whsec_` (Standard Webhooks). For 24 h after a rotation, two space-separated signatures, the new secret's first.",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)?$" },
  },
  WebhookUserAgent: {
    name: "User-Agent",
    in: "header",
    required: true,
    description: "`Assay-Webhooks/` and the version of the server that sent it.",
    schema: { type: "string", pattern: "^Assay-Webhooks/\\S+$" },
  },
  WebhookAcceptEncoding: {
    name: "Accept-Encoding",
    in: "header",
    required: true,
    description: "`identity`: a compressed answer is not inflated (only its first bytes are kept, as sent).",
    schema: { type: "string", const: "identity" },
  },
};

/** Answer headers, under components.headers. */
export const HEADERS = {
  Location: str(
    "Absolute URL of the resource created, of the run to poll, or of the webhook delivery queued.",
    { format: "uri" },
  ),
  RetryAfter: str("Seconds to wait before asking again.", { pattern: "^[0-9]+$" }),
  PreferenceApplied: str("The Prefer preferences that were honoured (RFC 7240), e.g. `respond-async`."),
  IdempotentReplayed: str(
    "`true` when the answer is the replay of an earlier request with the same Idempotency-Key.",
    {
      enum: ["true"],
    },
  ),
  RateLimitPolicy: str(
    'The rate-limit policies that apply (IETF httpapi ratelimit headers), e.g. `"default";q=1200;w=60`: q requests per w seconds.',
  ),
  RateLimit: str(
    'What is left of each policy, e.g. `"default";r=1187;t=12`: r requests remain; t is the number of seconds until the budget is whole again (in every answer, 429 included).',
  ),
  WWWAuthenticate: str("The authentication scheme to use: `Bearer`."),
  AcceptEncoding: str(
    "On a 415 for a Content-Encoding the endpoint does not take: the codings it takes (`identity`; a run start `base64, identity`).",
  ),
  Warning: str(
    'On answers to a token within 7 days of its rotation deadline (RFC 7234 §5.5, code 299), e.g. `299 assay "This token must be rotated before 2026-12-01T00:00:00.000Z"`.',
  ),
  ContentDisposition: str(
    'How to save the body: `attachment; filename="…"` (a download) or `inline; filename="…"`.',
  ),
  ETag: str('A workflow\'s version as a strong entity tag, e.g. `"7"`: send it back in If-Match.'),
  ContentETag: str(
    "The content's SHA-256 in hex (the run's submission.sha256) as a strong entity tag: the content never changes.",
  ),
  ReportETag: str(
    "A strong entity tag of the report's bytes: it changes whenever the report does (while the run executes, and whenever anything the report shows changes).",
  ),
  RequestId: str(
    "The request's id, as the server's log lines name it: the request's own X-Request-Id when that is 1–128 letters, digits and `. _ : / + = @ -`, else a new UUID.",
    { pattern: "^[A-Za-z0-9._:/+=@-]{1,128}$" },
  ),
  WebhookRetryAfter: str(
    "A webhook receiver's: seconds, or an HTTP date, before the next attempt; honoured up to a day (a longer one counts as a day).",
  ),
  SetCookie: str(
    "The web session cookie `assay_session` (HttpOnly, SameSite=Lax), over HTTPS `__Host-assay_session` and Secure: set on sign-in, setup and password change, cleared (Max-Age=0) on sign-out.",
  ),
};

/**
 * The headers every answer carries: the request's id (docs/api.md), and the rate limits
 * (CONTRACT §8): the token's and its user's budgets once authenticated, the client address's
 * `"ip"` budget (failed authentications) otherwise.
 */
export const RATE_LIMIT_HEADERS = {
  "X-Request-Id": { $ref: "#/components/headers/RequestId" },
  "RateLimit-Policy": { $ref: "#/components/headers/RateLimitPolicy" },
  RateLimit: { $ref: "#/components/headers/RateLimit" },
};

/**
 * The headers of answers to an authenticated request: the rate-limit headers always, Warning when
 * the token is close to its rotation deadline (set while authenticating, so errors after it too).
 */
export const AUTHENTICATED_HEADERS = {
  ...RATE_LIMIT_HEADERS,
  Warning: { $ref: "#/components/headers/Warning" },
};

/** One response per error status: [component name, description, extra headers]. */
const ERRORS: Record<number, [string, string, Record<string, unknown>?]> = {
  400: [
    "BadRequest",
    "The request is invalid: `errors[]` has one item per problem ({field, code, message}).",
  ],
  401: [
    "Unauthorized",
    "authentication_required: no token, or one that is unknown, revoked or expired.",
    { "WWW-Authenticate": { $ref: "#/components/headers/WWWAuthenticate" } },
  ],
  403: ["Forbidden", "permission_denied: the role is too low, or the organization is suspended or deleted."],
  404: ["NotFound", "not_found: no such resource in this organization."],
  409: [
    "Conflict",
    "conflict (e.g. a slug taken), workflow_inactive or idempotency_key_in_progress (the only one with Retry-After: when to send the request again).",
    { "Retry-After": { $ref: "#/components/headers/RetryAfter" } },
  ],
  410: ["Gone", "gone: the submission content was purged by the retention policy."],
  412: [
    "PreconditionFailed",
    "precondition_failed: If-Match names another version than the workflow's current one, or any entity tag on a resource that has none (every other one), or If-None-Match is * (or names the workflow's version); nothing was changed.",
  ],
  413: ["PayloadTooLarge", "payload_too_large: the body is over the limit, which `detail` states."],
  415: [
    "UnsupportedMediaType",
    "unsupported_media_type: a Content-Type (or charset) or Content-Encoding this endpoint does not take.",
    { "Accept-Encoding": { $ref: "#/components/headers/AcceptEncoding" } },
  ],
  422: ["Unprocessable", "idempotency_key_reused: the Idempotency-Key was used for a different request."],
  429: [
    "TooManyRequests",
    "rate_limited: wait Retry-After seconds.",
    { "Retry-After": { $ref: "#/components/headers/RetryAfter" } },
  ],
  500: ["InternalError", "internal_error: a bug on our side, logged; nothing about it is disclosed."],
  503: [
    "ServiceUnavailable",
    "service_unavailable: shutting down, the database is not available, or the run queue is full.",
    { "Retry-After": { $ref: "#/components/headers/RetryAfter" } },
  ],
};

/**
 * The component for an error status. Answers to requests that are not authenticated (the public
 * operations: sign-in, sign-out, setup, the probes) carry the address's `"ip"` budget and never a
 * Warning (docs/limits.md): theirs are the `Public…` variants.
 */
export const errorResponseName = (status: number, authenticated = true): string | undefined => {
  const name = ERRORS[status]?.[0];
  return name && !authenticated ? `Public${name}` : name;
};

/** A public 429 comes from the address's budget (with its "ip" policy) or the sign-in limiter. */
const PUBLIC_429 =
  'rate_limited: wait Retry-After seconds. Too many failed authentications from this address, or too many sign-in attempts (RateLimit-Policy and RateLimit show the address\'s `"ip"` budget either way).';

/** components.responses: each error status with the Error object and its headers, twice. */
export function errorResponses(): Record<string, unknown> {
  const content = { "application/json": { schema: { $ref: "#/components/schemas/Error" } } };
  return Object.fromEntries(
    Object.entries(ERRORS).flatMap(([status, [name, description, headers]]) => {
      const authed = { ...headers, ...AUTHENTICATED_HEADERS };
      // An authentication that failed has no token to warn about.
      if (status === "401") delete (authed as Record<string, unknown>).Warning;
      const open = { ...headers, ...RATE_LIMIT_HEADERS };
      return [
        [name, { description, headers: authed, content }],
        [
          `Public${name}`,
          {
            description: status === "429" ? PUBLIC_429 : description,
            headers: open,
            content,
          },
        ],
      ];
    }),
  );
}

// Helpers for a route's `detail`.

/** What a route's `detail` may hold: an OpenAPI operation whose schemas may be TypeBox schemas. */
export interface OperationDetail {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  deprecated?: boolean;
  /** Omitted: bearer token or session cookie. `[]`: public. */
  security?: Record<string, string[]>[];
  parameters?: unknown[];
  requestBody?: { required?: boolean; description?: string; content: Record<string, unknown> };
  /** Merged over the generated responses: description, headers, content (replaces). */
  responses?: Record<number, Record<string, unknown>>;
}
/**
 * Types a `detail` that Elysia's OpenAPI 3.0 types cannot express (TypeBox schemas, 3.1
 * keywords); src/http/openapi/document.ts turns it into plain OpenAPI 3.1.
 */
export const describe = (d: OperationDetail): DocumentDecoration => d as unknown as DocumentDecoration;

/** `responses` entries for error statuses, for a route without a response schema of its own. */
export const errorRefs = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, { $ref: `#/components/responses/${errorResponseName(s)}` }]));
export const param = (name: keyof typeof PARAMETERS) => ({ $ref: `#/components/parameters/${name}` });
export const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
