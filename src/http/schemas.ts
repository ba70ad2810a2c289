// Shared OpenAPI pieces: the error object and the error statuses a route can answer.
import { FormatRegistry, type IntegerOptions, type StringOptions, Type } from "@sinclair/typebox";
import { t } from "elysia";
import { charCount } from "../lib/text.ts";
import { documentedAs, named } from "./openapi/named.ts";

/**
 * An integer, in a request body or a response: TypeBox's plain integer, a JSON number and nothing
 * else. Never Elysia's t.Integer (nor t.Numeric): it is a transform whose extra branch takes a
 * number written as text ("-1", "1e3", "0x10", " "), its bounds checked only by a decode step
 * after the compiled check (an error naming no field; the built server skipped it and stored the
 * text). In a JSON body that let {"token_rotation_days": "-1"} be saved and lock every token out,
 * and "0x10" become 16; a JSON body is typed: a string there is a 400 naming the field.
 * test/request-bodies.test.ts checks that no route's body schema holds one. In a response, a
 * transform also makes Elysia pass every answer through TypeBox's interpreted Value.Encode
 * instead of its compiled check: a page of 50 runs took 2.5 ms of CPU, almost all of it there
 * (docs/benchmarks.md). Query parameters are text by nature and are parsed by hand (pagination.ts).
 * Give every integer a `maximum` that keeps it clear of Date and SQLite overflows (docs/limits.md).
 */
export const Int = (options?: IntegerOptions) => Type.Integer(options);

/**
 * A request string of `minLength` to `max` characters, counted as JSON Schema counts them (code
 * points), where TypeBox's own minLength/maxLength count UTF-16 code units: 100 emoji are 200 of
 * those, and the server refused a name the document allowed. The bound is a format of ours,
 * registered here and documented as minLength/maxLength (src/http/openapi/normalize.ts); the
 * route's `error` message is the answer, as with any other keyword. Services that check a length
 * themselves use charCount (src/lib/text.ts).
 */
export function Chars(max: number, options: StringOptions & { minLength?: number } = {}) {
  const { minLength = 0, ...rest } = options;
  const format = `assay-chars-${minLength}-${max}`;
  if (!FormatRegistry.Has(format))
    FormatRegistry.Set(format, (v) => {
      const n = charCount(v);
      return n >= minLength && n <= max;
    });
  return t.String({ ...rest, format });
}

/**
 * A string in a response that is one of `values`: checked as a plain string (no union of literals
 * for Elysia to walk on every answer), documented as the `enum` it is so that a client generator
 * makes a union type of it. `values` is the very list the server's code draws from.
 */
export const OneOf = (values: readonly string[], description?: string) => {
  const opts = description ? { description } : {};
  return documentedAs(t.String(opts), { type: "string", enum: [...values], ...opts });
};
/** OneOf or null (t.Nullable around a documented schema would lose the null in the document). */
export const OneOfOrNull = (values: readonly string[], description?: string) => {
  const opts = description ? { description } : {};
  return documentedAs(t.Nullable(t.String(opts)), {
    type: ["string", "null"],
    enum: [...values, null],
    ...opts,
  });
};

export const ErrorItemSchema = named(
  "ErrorItem",
  t.Object(
    {
      field: t.String({ description: "The field, header or part at fault (e.g. steps[0].config.schema)" }),
      code: t.String({ description: "A stable, machine-readable code (e.g. required, invalid)" }),
      message: t.String(),
    },
    { description: "One problem with the request" },
  ),
);

export const ErrorSchema = named(
  "Error",
  t.Object(
    {
      detail: t.String({ description: "What went wrong, for people" }),
      code: t.String({ description: "Stable code: invalid_request, not_found, rate_limited …" }),
      status: Int({ description: "The HTTP status, repeated" }),
      errors: t.Array(ErrorItemSchema),
    },
    { description: "The error object: every non-2xx answer" },
  ),
);

/** Response schemas for error statuses, for a route's `response` map. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, ErrorSchema])) as Record<number, typeof ErrorSchema>;
}

/** The statuses every authenticated route can answer. */
export const AUTHED = [400, 401, 403, 404, 429, 500] as const;

export const OkSchema = t.Object({ detail: t.String() });

/**
 * The bounds that services check on names and identifiers, for documentedWith()
 * (src/http/openapi/named.ts): the OpenAPI document states them, the service's check (which
 * reports every problem of a body together) stays the one that refuses. `\S`: not blank.
 */
export const BOUNDS = {
  tokenName: { minLength: 1, maxLength: 100, pattern: "\\S" },
  name: { minLength: 1, maxLength: 200, pattern: "\\S" },
  username: { minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$" },
  orgSlug: { minLength: 1, maxLength: 63, pattern: "^[a-z][a-z0-9-]{0,62}$" },
  workflowSlug: { minLength: 1, maxLength: 63, pattern: "^[a-z][a-z0-9_-]{0,62}$" },
  password: { minLength: 8, maxLength: 1024 },
  /** Empty (no address) or local@domain without spaces (src/users/service.ts). */
  email: { maxLength: 254, pattern: "^$|^[^@\\s]+@[^@\\s]+$" },
} as const;
