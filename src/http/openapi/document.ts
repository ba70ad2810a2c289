// The OpenAPI 3.1 document, built once from the route schemas. @elysiajs/openapi's
// toOpenAPISchema turns each route into an operation (path and query parameters, body,
// responses); this file then applies what the route's `detail` declares beyond that (header
// parameters, a hand-written requestBody, answer headers, response content), cleans every schema
// (./normalize.ts), refers error statuses to components.responses, and adds what global layers
// do to every route (src/http/limits.ts, src/http/errors.ts): rate-limit headers, 413 on every
// method that may carry a body, 412 on every unsafe one (src/http/preconditions.ts), 415 on JSON bodies, 429 everywhere but the probes, 503 wherever
// the database is reached, Location on every 201; and the `webhooks` map of the deliveries Assay
// sends (src/webhooks/openapi.ts). How to declare a route so that the document
// stays lint-clean: docs/api.md.
import { toOpenAPISchema } from "@elysiajs/openapi/openapi";
import type { AnyElysia } from "elysia";
import { ErrorSchema } from "../schemas.ts";
import {
  AUTHENTICATED_HEADERS,
  RATE_LIMIT_HEADERS,
  HEADERS,
  PARAMETERS,
  SECURITY_SCHEMES,
  TAGS,
  errorResponseName,
  errorResponses,
} from "./components.ts";
import { webhookEntries } from "../../webhooks/openapi.ts";
import { nameOf } from "./named.ts";
import { type Obj, SchemaRegistry, isObj } from "./normalize.ts";

export const OPENAPI_VERSION = "3.1.1";
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];
/** Methods whose body the limits never read: every other one may be refused 413 before routing. */
const BODYLESS = new Set(["get", "head", "options"]);
/** Probes are never rate limited (src/http/limits.ts UNLIMITED_PATHS). */
const PROBES = new Set(["/healthz", "/readyz"]);
/**
 * Operations that never reach the database: the rest may answer 503 when it is unavailable, busy
 * or locked (src/http/errors.ts), authentication included.
 */
const NO_DATABASE = new Set(["/healthz"]);
const STATUS_TEXT: Record<string, string> = {
  "200": "OK",
  "201": "Created",
  "202": "Accepted: not finished yet",
  "204": "Done; no content",
  // A GET of a resource without an ETag with If-None-Match: * (src/http/preconditions.ts).
  "304":
    "Not Modified: If-None-Match is * and the resource exists (it has no ETag); no body (RFC 9110 §13.1.2)",
};

interface Detail {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  deprecated?: boolean;
  security?: unknown[];
  parameters?: unknown[];
  requestBody?: Obj;
  responses?: Record<string, Obj>;
}
type Route = { method: string; path: string; hooks?: { detail?: Detail } };

/**
 * Elysia gives a route's top-level object schemas (body, responses) `additionalProperties: false`
 * when it first compiles the route, on its first request, by changing the schema object itself.
 * Doing the same here first makes the document one thing, whichever routes were served before
 * it was built (found by a 500: two schemas of one name, one of them served).
 */
function settle(routes: Route[]): void {
  const close = (s: unknown) => {
    if (s && typeof s === "object" && (s as Obj).type === "object" && !("additionalProperties" in s))
      (s as Obj).additionalProperties = false;
  };
  for (const r of routes) {
    const hooks = (r.hooks ?? {}) as { body?: unknown; response?: unknown };
    close(hooks.body);
    const res = hooks.response;
    if (res && typeof res === "object" && Object.keys(res).every((k) => /^\d{3}$/.test(k)))
      for (const s of Object.values(res)) close(s);
    else close(res);
  }
}

export function buildDocument(app: AnyElysia, version: string): Obj {
  settle(app.routes as Route[]);
  const generated = toOpenAPISchema(app, undefined, undefined, undefined, OPENAPI_VERSION) as unknown as {
    paths: Record<string, Record<string, Obj>>;
  };
  const details = new Map<string, Detail>();
  for (const r of app.routes as Route[])
    details.set(`${r.method.toLowerCase()} ${r.path.replace(/:([^/]+)/g, "{$1}")}`, r.hooks?.detail ?? {});
  const reg = new SchemaRegistry();
  reg.clean(ErrorSchema); // components.responses refer to it
  const paths: Record<string, Obj> = {};
  for (const [path, item] of Object.entries(generated.paths)) {
    const out: Obj = {};
    for (const method of METHODS) {
      const op = item[method];
      if (op) out[method] = operation(op, details.get(`${method} ${path}`) ?? {}, reg, { path, method });
    }
    if (Object.keys(out).length) paths[path] = out;
  }
  // The deliveries Assay sends (OpenAPI 3.1 `webhooks`), their run the Run component itself.
  const webhooks = webhookEntries((schema) => reg.clean(schema));
  const components = {
    schemas: reg.components(),
    responses: errorResponses(),
    parameters: PARAMETERS,
    headers: HEADERS,
    securitySchemes: SECURITY_SCHEMES,
  };
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: "Assay API",
      version,
      description:
        "Validation workflows over a REST API. Every error is `{detail, code, status, errors}`; every list is `{count, next, previous, results}` (`?page=1&page_size=50`).",
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    security: [{ bearer: [] }, { session: [] }],
    tags: TAGS,
    paths,
    webhooks,
    components: { ...pruned({ paths, webhooks }, components), securitySchemes: SECURITY_SCHEMES },
  };
}

/** The components that `paths` and `webhooks` refer to, directly or through other components. */
function pruned(paths: Obj, components: Record<string, Record<string, unknown>>) {
  const used = new Set<string>();
  const visit = (v: unknown) => {
    if (Array.isArray(v)) for (const x of v) visit(x);
    else if (isObj(v))
      for (const [k, x] of Object.entries(v)) {
        if (k === "$ref" && typeof x === "string" && !used.has(x)) {
          used.add(x);
          const [, , kind, name] = x.split("/");
          visit(components[kind!]?.[name!]);
        } else visit(x);
      }
  };
  visit(paths);
  return Object.fromEntries(
    Object.entries(components).map(([kind, all]) => [
      kind,
      Object.fromEntries(Object.entries(all).filter(([name]) => used.has(`#/components/${kind}/${name}`))),
    ]),
  );
}

function operation(op: Obj, d: Detail, reg: SchemaRegistry, at: { path: string; method: string }): Obj {
  // Authenticated unless the route says otherwise: `security: []` (public) or a list holding {}
  // (anonymous allowed). Only authenticated requests carry the rate-limit headers.
  const authenticated =
    !d.security || (d.security.length > 0 && !d.security.some((s) => isObj(s) && !Object.keys(s).length));
  const out: Obj = { operationId: d.operationId ?? op.operationId };
  for (const k of ["tags", "summary", "description", "deprecated"] as const)
    if (d[k] !== undefined) out[k] = d[k];
  const parameters = [
    ...((op.parameters as Obj[] | undefined) ?? []).map((p) => ({ ...p, schema: reg.clean(p.schema) })),
    ...(d.parameters ?? []),
  ];
  if (parameters.length) out.parameters = parameters;
  let jsonBody = false;
  if (d.requestBody)
    out.requestBody = { ...d.requestBody, content: cleanContent(d.requestBody.content, reg) };
  else if (isObj(op.requestBody)) {
    // Only JSON: other media types are refused with 415 (src/http/limits.ts).
    const content = op.requestBody.content as Record<string, Obj>;
    const schema = content["application/json"]?.schema;
    out.requestBody = { required: true, content: { "application/json": { schema: reg.clean(schema) } } };
    jsonBody = true;
  }
  const responses: Record<string, Obj> = {};
  const generated = (op.responses as Record<string, Obj> | undefined) ?? {};
  const statuses = new Set([...Object.keys(generated), ...Object.keys(d.responses ?? {})]);
  if (jsonBody) statuses.add("415");
  // A request without a usable Host header is refused with 400 before routing, on every path
  // (src/http/fallback.ts, test/host-header.test.ts).
  statuses.add("400");
  // The body limit is checked before routing, for any method that may carry a body.
  if (!BODYLESS.has(at.method)) statuses.add("413");
  // Every unsafe method judges If-Match and If-None-Match (src/http/preconditions.ts).
  if (!BODYLESS.has(at.method)) statuses.add("412");
  // The address's budget for failed authentication is checked before routing, on every path.
  if (!PROBES.has(at.path)) statuses.add("429");
  if (!NO_DATABASE.has(at.path)) statuses.add("503");
  for (const status of [...statuses].sort()) {
    const g = generated[status];
    const schema = firstSchema(g);
    const component = errorResponseName(Number(status), authenticated);
    if (component && (!g || nameOf(schema) === "Error") && !d.responses?.[status]) {
      responses[status] = { $ref: `#/components/responses/${component}` };
      continue;
    }
    const custom = d.responses?.[status] ?? {};
    if (custom.$ref) {
      // errorRefs() names the authenticated variant; a public operation's carries no Warning.
      const publicName = authenticated ? undefined : errorResponseName(Number(status), false);
      responses[status] = publicName ? { $ref: `#/components/responses/${publicName}` } : custom;
      continue;
    }
    const r: Obj = {
      description:
        (custom.description as string | undefined) ??
        (isObj(schema) && typeof schema.description === "string" && !nameOf(schema)
          ? schema.description
          : (STATUS_TEXT[status] ?? "See the error object")),
    };
    const headers = {
      // Every 201 names what it created (the routes set it with publicOrigin: ASSAY_BASE_URL).
      ...(status === "201" ? { Location: { $ref: "#/components/headers/Location" } } : {}),
      ...(custom.headers as Obj | undefined),
      ...(authenticated ? AUTHENTICATED_HEADERS : RATE_LIMIT_HEADERS),
    };
    if (Object.keys(headers).length) r.headers = headers;
    if (custom.content) r.content = cleanContent(custom.content, reg);
    else if (status !== "204" && schema) r.content = { "application/json": { schema: reg.clean(schema) } };
    responses[status] = r;
  }
  out.responses = responses;
  if (d.security) out.security = d.security;
  return out;
}

function firstSchema(r: Obj | undefined): unknown {
  const content = r?.content;
  if (!isObj(content)) return undefined;
  for (const media of Object.values(content)) if (isObj(media) && media.schema) return media.schema;
  return undefined;
}

function cleanContent(content: unknown, reg: SchemaRegistry): Obj {
  if (!isObj(content)) return {};
  return Object.fromEntries(
    Object.entries(content).map(([type, media]) => {
      const m = { ...(media as Obj) };
      if (m.schema !== undefined) m.schema = reg.clean(m.schema);
      return [type, m];
    }),
  );
}

/** Problems with how routes are declared (test/openapi.test.ts reports them by operation). */
export function conventionProblems(doc: Obj): string[] {
  const problems: string[] = [];
  const ids = new Map<string, string>();
  const tags = new Set<string>(TAGS.map((t) => t.name));
  const paths = doc.paths as Record<string, Record<string, Obj>>;
  for (const [path, item] of Object.entries(paths)) {
    const twin = path.endsWith("/") ? path.slice(0, -1) : `${path}/`;
    if (twin in paths && path.endsWith("/")) problems.push(`${path}: also documented as ${twin}`);
    for (const [method, op] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      const id = op.operationId as string | undefined;
      // The framework's own ids spell out the method and path (getApiV1Setup): a route without one.
      if (!id || !/^[a-z][A-Za-z0-9]*$/.test(id) || /^[a-z]+ApiV\d/.test(id))
        problems.push(`${where}: detail.operationId must be a camelCase verb phrase (got ${id})`);
      else if (ids.has(id)) problems.push(`${where}: operationId ${id} is also used by ${ids.get(id)}`);
      else ids.set(id, where);
      const opTags = (op.tags as string[] | undefined) ?? [];
      if (opTags.length !== 1 || !tags.has(opTags[0]!))
        problems.push(`${where}: detail.tags must be one of the tags in src/http/openapi/components.ts`);
      if (!op.summary) problems.push(`${where}: detail.summary is missing`);
    }
  }
  return problems;
}
