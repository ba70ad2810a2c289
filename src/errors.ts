// One error type for the whole service. Every non-2xx answer is rendered from an AppError by
// src/http/errors.ts as the spec's object {detail, code, status, errors}.

export interface ErrorItem {
  field: string;
  code: string;
  message: string;
}

/** A field's problem before it is named: a check's answer, made an ErrorItem by its caller. */
export type Problem = Omit<ErrorItem, "field">;

/** An `invalid` Problem: the common answer of a field's check. */
export const invalidBecause = (message: string): Problem => ({ code: "invalid", message });

export class AppError extends Error {
  readonly status: number;
  readonly errorCode: string;
  readonly errors: ErrorItem[];
  /** Extra response headers (Retry-After, WWW-Authenticate …). */
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    errorCode: string,
    detail: string,
    errors: ErrorItem[] = [],
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.status = status;
    this.errorCode = errorCode;
    this.errors = errors;
    this.headers = headers;
  }
}

/** An AppError as a message between threads (a structured clone keeps no class). */
export interface WireError {
  status: number;
  code: string;
  detail: string;
  errors: ErrorItem[];
  headers: Record<string, string>;
}

export const toWire = (e: AppError): WireError => ({
  status: e.status,
  code: e.errorCode,
  detail: e.message,
  errors: e.errors,
  headers: e.headers,
});

export const fromWire = (w: WireError): AppError =>
  new AppError(w.status, w.code, w.detail, w.errors, w.headers);

export const unauthenticated = (detail = "Authentication credentials were not provided or are invalid.") =>
  new AppError(401, "authentication_required", detail, [], { "WWW-Authenticate": 'Bearer realm="assay"' });

export const forbidden = (detail = "You do not have permission to perform this action.") =>
  new AppError(403, "permission_denied", detail);

export const notFound = (what = "Resource") => new AppError(404, "not_found", `${what} not found.`);

export const invalid = (detail: string, errors: ErrorItem[] = []) =>
  new AppError(400, "invalid_request", detail, errors);

/** A single-field validation failure: the common case for hand-written checks. */
export const invalidField = (field: string, message: string, code = "invalid") =>
  invalid(`Invalid value for ${field}.`, [{ field, code, message }]);

/** invalidField for a field's check's Problem (its code and message). */
export const fieldProblem = (field: string, p: Problem) => invalidField(field, p.message, p.code);

/**
 * Throws the problems of a body's fields, all in one answer (docs/api.md): one problem as
 * fieldProblem answers it, several as the schema's answer does (its detail, an item each, in the
 * order given). Nothing when every check passed.
 */
export function throwProblems(checks: readonly (readonly [field: string, p: Problem | null])[]): void {
  const items: ErrorItem[] = [];
  for (const [field, p] of checks) if (p) items.push({ field, ...p });
  if (items.length === 1) throw fieldProblem(items[0]!.field, items[0]!);
  if (items.length > 1) throw invalid("The request is invalid.", items);
}

export const conflict = (detail: string, errors: ErrorItem[] = []) =>
  new AppError(409, "conflict", detail, errors);

/** A body its Content-Type does not describe (the framework's parse error, or ours before it). */
export const malformedBody = () =>
  invalid("The request body is malformed.", [
    { field: "body", code: "parse_error", message: "The body could not be parsed as its Content-Type says." },
  ]);
export const serviceUnavailable = (detail: string, retryAfterS: number) =>
  new AppError(503, "service_unavailable", detail, [], { "Retry-After": String(retryAfterS) });
