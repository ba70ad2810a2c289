// The one error contract (CONTRACT §5): every non-2xx answer is {detail, code, status, errors}
// as application/json. Errors are mapped by class (instanceof), never by a `code` string: Elysia
// copies any thrown object's `code` field, and a SQLite error's code must not reach a client.
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia, NotFoundError, ParseError, ValidationError } from "elysia";
import { DatabaseUnavailable, ReferenceGone, RetryableConflict, UnstorableText } from "../db/program.ts";
import { AppError, type ErrorItem, conflict, malformedBody, serviceUnavailable } from "../errors.ts";
import { type Logger, throttle } from "../lib/log.ts";
import { type Cors, allowList } from "./cors.ts";
import { authenticates } from "./auth.ts";
import { fieldCheckOf } from "./openapi/named.ts";
import { knownRequestId, loggedPath } from "./request-log.ts";

export interface ErrorBody {
  detail: string;
  code: string;
  status: number;
  errors: ErrorItem[];
}

export function errorResponse(e: AppError, extraHeaders?: Record<string, string>): Response {
  const body: ErrorBody = { detail: e.message, code: e.errorCode, status: e.status, errors: e.errors };
  return new Response(JSON.stringify(body), {
    status: e.status,
    // Per-user like every API answer (src/app.ts sets it on successes): a 401 or 404 kept by a
    // shared cache would be served to the next client of that URL.
    headers: {
      "cache-control": "no-store",
      ...extraHeaders,
      ...e.headers,
      "content-type": "application/json",
    },
  });
}

/**
 * Elysia/TypeBox validation failures → errors[] items {field, code, message}; for a body, followed
 * by the problems its services would report of the fields that passed the schema (boundItems).
 */
export function validationItems(err: ValidationError): ErrorItem[] {
  let items: ErrorItem[];
  try {
    items = collectItems(err);
  } catch {
    // Hostile input (very deep values) can make TypeBox's error walk overflow: still a 400.
    return [{ field: err.type, code: "invalid", message: "Invalid value." }];
  }
  if (err.type !== "body") return items;
  try {
    const v = err.validator as { schema?: unknown } | undefined;
    return [...items, ...boundItems(v?.schema ?? v, err.value, items)];
  } catch {
    return items; // the schema's items alone, as before: the service reports the rest
  }
}

/**
 * The problems that the services check themselves (documentedWith's FieldCheck), of a body the
 * route's schema refused: without them the schema's 400 named only the field of the wrong type,
 * and a slug's format came back on the next request. A field's check runs when the field is
 * present, of its schema's type, and no schema item names it or a field inside it (`reported`); a
 * sibling that an item names reads as absent to a check. The walk goes into every object and
 * array the schema describes that no item names itself (a step with an unknown key still has its
 * name checked).
 * The items come after the schema's, in the order of the schema's fields (docs/api.md), depth
 * first; below a field whose own check answers, nothing more is checked (a list of 51 steps is
 * `too_many`, its steps are not looked at), as in the services. Runs only when the schema refused:
 * a valid request pays nothing.
 */
export function boundItems(schema: unknown, value: unknown, reported: ErrorItem[]): ErrorItem[] {
  const named = new Set(reported.map((i) => i.field));
  // Every field that an item names or holds one that does: `steps[0].name` marks `steps`,
  // `steps[0]` and `steps[0].name`.
  const marked = new Set<string>();
  for (const { field } of reported) {
    for (let i = 0; i < field.length; i++)
      if (field[i] === "." || field[i] === "[") marked.add(field.slice(0, i));
    marked.add(field);
  }
  const out: ErrorItem[] = [];
  const walk = (s: unknown, v: unknown, field: string, siblings: Record<string, unknown>): void => {
    if (v === undefined || !s || typeof s !== "object" || (field && named.has(field))) return;
    const check = fieldCheckOf(s);
    // Value.Check too: the framework lists at most 64 of a body's errors, so a field may be of the
    // wrong type with no item naming it.
    if (check && field && !marked.has(field) && Value.Check(s as TSchema, v)) {
      const problem = check(v as never, siblings);
      if (problem) {
        out.push({ field, code: problem.code, message: problem.message });
        return;
      }
    }
    const sc = s as { type?: unknown; properties?: Record<string, unknown>; items?: unknown };
    if (sc.type === "object" && sc.properties && v !== null && typeof v === "object" && !Array.isArray(v)) {
      const obj = v as Record<string, unknown>;
      const at = (k: string) => (field ? `${field}.${k}` : k);
      const own = (k: string) => (Object.hasOwn(obj, k) ? obj[k] : undefined);
      const present: Record<string, unknown> = {};
      for (const k of Object.keys(sc.properties))
        if (own(k) !== undefined && !marked.has(at(k))) present[k] = own(k);
      for (const [k, ps] of Object.entries(sc.properties)) walk(ps, own(k), at(k), present);
    } else if (sc.type === "array" && sc.items && !Array.isArray(sc.items) && Array.isArray(v))
      for (let i = 0; i < v.length; i++) walk(sc.items, v[i], `${field}[${i}]`, {});
  };
  walk(schema, value, "", {});
  return out;
}

// TypeBox's ValueErrorType numbers for a missing and an unknown property (typebox/errors).
const REQUIRED_PROPERTY = 45;
const ADDITIONAL_PROPERTY = 42;

/** A JSON Pointer as the field names the rest of the API uses: `steps[0].name`. */
export function fieldOf(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((out, seg) => (/^\d+$/.test(seg) ? `${out}[${seg}]` : out ? `${out}.${seg}` : seg), "");
}

const collectItems = (err: ValidationError): ErrorItem[] =>
  schemaItems(err.all as Iterable<SchemaError>, err.type === "body" ? "" : err.type);

/** A TypeBox value error, as Elysia's report and TypeBox's Value.Errors give it. */
export interface SchemaError {
  type?: number;
  path?: string;
  value?: unknown;
  message?: string;
  summary?: string;
  schema?: { error?: unknown };
}

/**
 * TypeBox's errors for a value → errors[] items, one per field; `part` names what was checked
 * ("body" when empty, "query", …): the same items for a request body and a workflow document.
 */
export function schemaItems(all: Iterable<SchemaError>, part = ""): ErrorItem[] {
  const where = part ? `${part}.` : "";
  const items = new Map<string, ErrorItem>();
  for (const v of all) {
    const field = where + fieldOf(v.path ?? "");
    if (items.has(field)) continue; // one message per field: TypeBox reports unions many times
    // The same item codes as the run request's own checks (src/runs/intake/modes.ts): a field
    // left out is `required`, one the endpoint does not take is `unknown_field`; not TypeBox's
    // "must be a string" for a missing field, or its "Property 'x' should not be provided".
    const missing = field !== "" && (v.type === REQUIRED_PROPERTY || v.value === undefined);
    items.set(
      field,
      v.type === ADDITIONAL_PROPERTY
        ? { field, code: "unknown_field", message: "is not a known field" }
        : missing
          ? { field, code: "required", message: "is required" }
          : {
              field: field || part || "body",
              code: "invalid",
              message:
                (typeof v.schema?.error === "string" ? v.schema.error : undefined) ??
                v.summary ??
                v.message ??
                "Invalid value.",
            },
    );
  }
  return [...items.values()];
}

type RouteInfo = { method: string; path: string; hooks?: { body?: unknown; transform?: unknown } };
// A route's path as a pattern: `:param` one segment, `*` the rest, every other character itself
// (the `.` of /api/v1/openapi.json matched any character: /api/v1/openapiXjson was a 405).
const pathPattern = (path: string) =>
  new RegExp(
    `^${path
      .replace(/\/$/, "")
      .split(/(:[^/]+|\*)/)
      .map((part) =>
        part === "*" ? ".*" : part.startsWith(":") ? "[^/]+" : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"),
      )
      .join("")}/?$`,
  );

/** A route table for telling 405 from 404: path patterns with their allowed methods. */
export function methodMatcher(routes: RouteInfo[]) {
  const table = routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ({ method: r.method, re: pathPattern(r.path) }));
  return (path: string): string[] => [...new Set(table.filter((t) => t.re.test(path)).map((t) => t.method))];
}

/** Retry-After (seconds) of a 503 caused by the database. */
export const DB_RETRY_AFTER_S = 2;

/**
 * Whether a request goes to a route with a body schema (src/http/limits.ts: a body is required),
 * and whether that route authenticates first ("authed") or not ("open": sign-in, setup).
 */
export function bodyMatcher(routes: RouteInfo[]) {
  const table = routes
    .filter((r) => r.hooks?.body)
    .map((r) => ({ method: r.method, re: pathPattern(r.path), authed: authenticates(r.hooks?.transform) }));
  return (method: string, path: string): "none" | "open" | "authed" => {
    const hit = table.find((t) => t.method === method && t.re.test(path));
    return !hit ? "none" : hit.authed ? "authed" : "open";
  };
}

export interface UnmatchedOptions {
  cors?: Cors;
  /**
   * Called for a request that matched no route (404 or 405): authenticates its bearer token, if
   * any, so that the answer carries the rate-limit headers like every authenticated answer; may
   * throw (429).
   */
  authenticate?: (request: Request, headers: Record<string, string>) => Promise<void>;
}

/**
 * The answer for an error a route or hook threw (the framework's own 404 and 405 aside): the
 * plugin below, and the sync-run lane of the HTTP threads (src/http/threads/lane.ts).
 */
/** Every request gets its 503 while the database is away; the log says so once a minute. */
const outage = throttle();

export function errorAnswer(
  log: Logger,
  error: unknown,
  request: Request,
  headers: Record<string, string>,
): Response {
  if (error instanceof AppError) return errorResponse(error, headers);
  // An answer that breaks its own response schema is our bug, not the client's: a 500 (logged
  // below with the rest), never a 400 listing `response.*` fields.
  if (error instanceof ValidationError && error.type !== "response")
    return errorResponse(
      new AppError(400, "invalid_request", "The request is invalid.", validationItems(error)),
      headers,
    );
  if (error instanceof ParseError) return errorResponse(malformedBody(), headers);
  // The database is down, restarting, or gave up on a statement: the client may retry; the
  // pool reconnects by itself. Logged without the driver's text in the answer.
  if (error instanceof DatabaseUnavailable || error instanceof RetryableConflict) {
    outage("database unavailable", (r) =>
      log.warn("database unavailable", {
        method: request.method,
        path: loggedPath(new URL(request.url).pathname),
        request_id: knownRequestId(request),
        error: error.message,
        ...r,
      }),
    );
    return errorResponse(
      serviceUnavailable("The database is not available right now; retry shortly.", DB_RETRY_AFTER_S),
      headers,
    );
  }
  // A row the request names was deleted meanwhile (another request, node or the CLI): the
  // request may be sent again, and then gets the answer the deletion calls for.
  if (error instanceof ReferenceGone) {
    log.warn("reference deleted meanwhile", {
      method: request.method,
      path: loggedPath(new URL(request.url).pathname),
      request_id: knownRequestId(request),
      error: error.message,
    });
    return errorResponse(
      conflict("Something this request refers to was deleted by another request meanwhile; send it again."),
      headers,
    );
  }
  if (error instanceof UnstorableText)
    return errorResponse(
      new AppError(
        400,
        "invalid_request",
        "The request carries a NUL character (U+0000), which cannot be stored.",
        [{ field: "body", code: "invalid_character", message: "Text values must not contain U+0000." }],
      ),
      headers,
    );
  // Anything else is our bug: log it whole, tell the client nothing about it.
  log.error("unhandled error", {
    method: request.method,
    path: loggedPath(new URL(request.url).pathname),
    request_id: knownRequestId(request),
    error: String((error as Error)?.stack ?? error),
  });
  return errorResponse(new AppError(500, "internal_error", "An internal error occurred."), headers);
}

/**
 * A body that failed the route's schema and crashed the framework's report of it: Elysia writes a
 * failed field's value into its message (`but found: ${value}`), which throws a TypeError for an
 * object whose own `toString` or `valueOf` is no function — any JSON object with such a key
 * (`{"name": {"toString": ""}}`, found by test/fuzz.test.ts), a 500 before. Only then is the
 * body walked (bounded like every body: src/http/body-shape.ts).
 */
function uncoercibleBody(error: unknown, body: unknown): boolean {
  if (!(error instanceof TypeError) || body === null || typeof body !== "object") return false;
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (!Array.isArray(v) && (Object.hasOwn(v, "toString") || Object.hasOwn(v, "valueOf"))) return true;
    for (const x of Object.values(v)) stack.push(x);
  }
  return false;
}

export function errorPlugin(
  log: Logger,
  allowedMethods: () => (path: string) => string[],
  unmatched: UnmatchedOptions = {},
) {
  return new Elysia({ name: "errors" }).onError({ as: "global" }, async (ctx) => {
    const { error, request, set } = ctx;
    const answer = uncoercibleBody(error, (ctx as { body?: unknown }).body)
      ? errorResponse(
          new AppError(400, "invalid_request", "The request is invalid.", [
            { field: "body", code: "invalid", message: "does not match the endpoint's schema" },
          ]),
          set.headers as Record<string, string>,
        )
      : await unmatchedOrError(error, request, set.headers as Record<string, string>);
    // The framework keeps its own guess in set.status (422 for a validation error, 500 for any
    // other, 200 when no route matched) and hands the after-response hooks no answer of ours: the
    // request metric (src/app.ts) reads the status sent from here.
    set.status = answer.status;
    return answer;
  });

  async function unmatchedOrError(error: unknown, request: Request, headers: Record<string, string>) {
    if (error instanceof NotFoundError) {
      const path = new URL(request.url).pathname;
      const methods = allowedMethods()(path);
      const allow = methods.length ? allowList(methods) : [];
      // OPTIONS on a path that exists: its Allow list (RFC 9110 §9.3.7), and a CORS preflight's
      // answer. No route answers OPTIONS, so it arrives here.
      if (allow.length && request.method === "OPTIONS")
        return new Response(null, {
          status: 204,
          headers: { ...headers, allow: allow.join(", "), ...unmatched.cors?.preflight(request, allow) },
        });
      try {
        await unmatched.authenticate?.(request, headers);
      } catch (e) {
        if (e instanceof AppError) return errorResponse(e, headers);
        throw e;
      }
      if (allow.length && !allow.includes(request.method))
        return errorResponse(
          new AppError(405, "method_not_allowed", `Method ${request.method} is not allowed on this path.`),
          { ...headers, Allow: allow.join(", ") },
        );
      return errorResponse(new AppError(404, "not_found", "Not found."), headers);
    }
    return errorAnswer(log, error, request, headers);
  }
}
