// Shared OpenAPI pieces: the error object and the error statuses a route can answer.
import { t } from "elysia";

export const ErrorSchema = t.Object(
  {
    detail: t.String(),
    code: t.String(),
    status: t.Integer(),
    errors: t.Array(t.Object({ field: t.String(), code: t.String(), message: t.String() })),
  },
  { description: "The error object: every non-2xx answer" },
);

/** Response schemas for error statuses, for a route's `response` map. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, ErrorSchema])) as Record<number, typeof ErrorSchema>;
}

/** The statuses every authenticated route can answer. */
export const AUTHED = [400, 401, 403, 404, 429, 500] as const;

export const OkSchema = t.Object({ detail: t.String() });
