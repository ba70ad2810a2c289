// Audit API: an org's Admins read the org's entries; instance admins read every entry and the
// chain's head. Pages of JSON by default; ?format=csv|jsonl streams every matching entry.
import { Elysia } from "elysia";
import type { Deps } from "../deps.ts";
import { type ErrorItem, invalid, invalidField, notFound } from "../errors.ts";
import type { authPlugin } from "../http/auth.ts";
import { headAnswer } from "../http/head.ts";
import { describe, header } from "../http/openapi/components.ts";
import { type Envelope, EnvelopeOf, envelope, parsePage } from "../http/pagination.ts";
import { AUTHED, errorResponses } from "../http/schemas.ts";
import { publicUrl } from "../http/url.ts";
import { filterTime, storedTime, timeFilterMessage } from "../lib/filter-time.ts";
import { charCount } from "../lib/text.ts";
import { requireInstanceAdmin, requireOrgRole } from "../orgs/access.ts";
import { AdminAuditQuery, AuditEntryOut, AuditHeadOut, OrgAuditQuery } from "./model.ts";
import { CSV_COLUMNS, csvRow, presentEntry } from "./present.ts";
import { type AuditFilters, type AuditItem, createAuditStore } from "./store.ts";
import { AUDIT_ACTIONS } from "./types.ts";

const FORMATS = ["json", "csv", "jsonl"] as const;
type Format = (typeof FORMATS)[number];
const MAX_FILTER_LENGTH = 200;
/**
 * The targets entries name (docs/audit.md). Another value is a 400, as an unknown run status is:
 * a typo (`workflows`) answered an empty page, read as "nothing changed".
 */
export const TARGET_TYPES = [
  "workflow",
  "member",
  "token",
  "user",
  "org",
  "webhook",
  "run",
  "schema",
  "settings",
  "audit_log",
] as const;

type Query = Partial<
  Record<
    "actor" | "action" | "target_type" | "target_id" | "created_after" | "created_before" | "format",
    string
  >
>;

const KINDS = [...new Set(AUDIT_ACTIONS.map((a) => a.slice(0, a.indexOf("."))))];
/** A known action, or a kind of them (`workflow.*`, `workflow.`): a typo is a 400, not an empty page. */
function actionMatches(v: string): boolean {
  if ((AUDIT_ACTIONS as readonly string[]).includes(v)) return true;
  const kind = v.endsWith(".*") ? v.slice(0, -2) : v.endsWith(".") ? v.slice(0, -1) : null;
  return kind !== null && KINDS.includes(kind);
}

/** The filters of a query; 400 with one errors[] item per bad value. */
function parseFilters(q: Query): { filters: AuditFilters; format: Format } {
  const errors: ErrorItem[] = [];
  const filters: AuditFilters = {};
  const text = (k: "actor" | "action" | "target_type" | "target_id") => {
    const v = q[k];
    if (v === undefined) return undefined;
    if (!v || charCount(v) > MAX_FILTER_LENGTH)
      errors.push({ field: k, code: "invalid", message: `${k} is 1 to ${MAX_FILTER_LENGTH} characters.` });
    return v;
  };
  filters.actor = text("actor");
  filters.action = text("action");
  if (filters.action && !actionMatches(filters.action))
    errors.push({
      field: "action",
      code: "invalid",
      message: `action is an action such as workflow.update (docs/audit.md), or a kind such as workflow.*; kinds: ${KINDS.join(", ")}.`,
    });
  filters.targetType = text("target_type");
  if (filters.targetType && !(TARGET_TYPES as readonly string[]).includes(filters.targetType))
    errors.push({
      field: "target_type",
      code: "invalid",
      message: `target_type is one of ${TARGET_TYPES.join(", ")}.`,
    });
  filters.targetId = text("target_id");
  for (const k of ["created_after", "created_before"] as const) {
    const v = q[k];
    if (v === undefined) continue;
    const ms = filterTime(v);
    if (ms === null) errors.push({ field: k, code: "invalid", message: timeFilterMessage(k) });
    else filters[k === "created_after" ? "createdAfter" : "createdBefore"] = storedTime(ms);
  }
  const format = (q.format ?? "json") as Format;
  if (!FORMATS.includes(format))
    errors.push({ field: "format", code: "invalid", message: "format is json, csv or jsonl." });
  if (errors.length) throw invalid("Invalid filters.", errors);
  return { filters, format };
}

/** Every matching entry as CSV or JSON Lines, read a chunk at a time while the client reads. */
function exportResponse(
  chunks: AsyncGenerator<AuditItem[]>,
  format: "csv" | "jsonl",
  name: string,
): Response {
  const bytes = new TextEncoder();
  let header = format === "csv";
  const body = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      const prefix = header ? `${CSV_COLUMNS.join(",")}\r\n` : "";
      header = false;
      const next = await chunks.next();
      if (next.done) {
        if (prefix) ctl.enqueue(bytes.encode(prefix));
        ctl.close();
        return;
      }
      const lines = next.value.map((e) =>
        format === "csv" ? csvRow(e) : `${JSON.stringify(presentEntry(e))}\n`,
      );
      ctl.enqueue(bytes.encode(prefix + lines.join("")));
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
  return new Response(body, { headers: exportHeaders(format, name) });
}

const exportHeaders = (format: "csv" | "jsonl", name: string) => ({
  "content-type": format === "csv" ? "text/csv; charset=utf-8" : "application/jsonl; charset=utf-8",
  "content-disposition": `attachment; filename="${name}.${format}"`,
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});

export function auditRoutes(deps: Deps, auth: ReturnType<typeof authPlugin>) {
  const { orgs, config } = deps;
  const store = createAuditStore(deps.db);
  const detail = { tags: ["Audit"] };
  const stamp = () => new Date().toISOString().replace(/[:.]/g, "-");

  type Page = Envelope<ReturnType<typeof presentEntry>>;
  /**
   * A page, or (csv, jsonl) a download. Typed as the page: Elysia sends a Response as it is,
   * without the response schema (the runs route does the same).
   */
  async function answer(
    request: Request,
    q: Query & { page?: string; page_size?: string },
    f: AuditFilters,
    name: string,
  ): Promise<Page> {
    const { filters, format } = parseFilters(q);
    const all = { ...filters, ...f };
    // A HEAD says GET's headers and framing (a stream: chunked) without reading an entry: the
    // framework would run the whole export to count its bytes (src/http/head.ts).
    if (format !== "json" && request.method === "HEAD")
      return headAnswer(request, exportHeaders(format, `${name}-${stamp()}`), null) as unknown as Page;
    if (format !== "json")
      return exportResponse(store.each(all), format, `${name}-${stamp()}`) as unknown as Page;
    const p = parsePage(q);
    const { count, items } = await store.list(all, p.limit, p.offset);
    return envelope(publicUrl(config.base_url, request), p, count, items.map(presentEntry));
  }

  const responses = { 200: EnvelopeOf(AuditEntryOut), ...errorResponses(...AUTHED) };
  /** The page (JSON) or, with ?format=, every matching entry as a download. */
  const listContent = {
    200: {
      description: "A page of entries, newest first; with `format=csv|jsonl` every matching entry as a file",
      // Sent with the csv and jsonl downloads only.
      headers: { "Content-Disposition": header("ContentDisposition") },
      content: {
        "application/json": { schema: EnvelopeOf(AuditEntryOut) },
        "text/csv": { schema: { type: "string", description: "A header row, then one row per entry" } },
        "application/jsonl": {
          schema: { type: "string", description: "One entry per line, as the JSON page shows it" },
        },
      },
    },
  };
  const formats =
    "Filters: actor, action (exact, or `workflow.*`), target_type, target_id, created_after, created_before. Newest first. `?format=csv|jsonl` returns every matching entry as a download instead of a page.";
  return new Elysia()
    .use(auth)
    .get(
      "/api/v1/orgs/:org_slug/audit/",
      async ({ params, query, request, principal }) => {
        const { org } = await requireOrgRole(orgs, principal, params.org_slug, "admin");
        return answer(request, query, { orgId: org.id }, `audit-${org.slug}`);
      },
      {
        auth: "admin",
        query: OrgAuditQuery,
        response: responses,
        detail: describe({
          ...detail,
          operationId: "listOrgAuditEntries",
          summary: "The org's audit log (Admin)",
          description: formats,
          responses: listContent,
        }),
      },
    )
    .get(
      "/api/v1/admin/audit/",
      async ({ query, request, principal }) => {
        requireInstanceAdmin(principal);
        let orgId: number | undefined;
        if (query.org !== undefined) {
          // Empty, as every other filter's empty value: a 400, not "Organization not found".
          if (query.org === "") throw invalidField("org", "org is an organization's slug.");
          const o = await orgs.getBySlug(query.org);
          if (!o) throw notFound("Organization");
          orgId = o.id;
        }
        const name = `audit-${query.org ?? "instance"}`;
        return answer(request, query, orgId === undefined ? {} : { orgId }, name);
      },
      {
        auth: true,
        query: AdminAuditQuery,
        response: responses,
        detail: describe({
          ...detail,
          operationId: "adminListAuditEntries",
          summary: "The whole audit log (instance admin)",
          description: `${formats} \`org\`: one org's entries.`,
          responses: listContent,
        }),
      },
    )
    .get(
      "/api/v1/admin/audit/head/",
      async ({ principal }) => {
        requireInstanceAdmin(principal);
        const head = await store.head();
        if (!head) throw notFound("Audit entry");
        return head;
      },
      {
        auth: true,
        response: { 200: AuditHeadOut, ...errorResponses(...AUTHED) },
        detail: {
          ...detail,
          operationId: "adminGetAuditHead",
          summary: "The chain's head: seq and hash of the newest entry, to record outside Assay",
          description:
            "Record it elsewhere (a ticket, another system's log) now and then; `assay audit verify --anchor SEQ:HASH` later proves the log still holds that entry unchanged and everything before it.",
        },
      },
    );
}
