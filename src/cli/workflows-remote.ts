// Workflows as code over the API: `export` reads a workflow as its document, `apply` makes the
// server's workflow match a document — created when missing, replaced (PUT) when it differs,
// left alone when it matches, so applying the same file twice changes nothing the second time.
import { AppError } from "../errors.ts";
import { DOC_KIND, DOC_VERSION } from "../workflows/document.ts";
import type { WorkflowInput } from "../workflows/service.ts";
import { type Parsed, UsageError } from "./args.ts";
import { serverBase, shownUrl } from "./shown-url.ts";

export interface Remote {
  server: string;
  token: string;
  /** Each request, its answer's body included, is given up after this (`--timeout`, default 60 s). */
  timeoutS: number;
}

const DEFAULT_TIMEOUT_S = 60;

/** --server/ASSAY_SERVER and --token/ASSAY_TOKEN, or null when no server is named. */
export function remoteOf(p: Parsed): Remote | null {
  const raw = p.flags.server ?? process.env.ASSAY_SERVER;
  if (!raw) {
    if (p.flags.token) throw new UsageError("--token goes with --server URL");
    return null;
  }
  const server = serverBase(raw);
  const token = p.flags.token ?? process.env.ASSAY_TOKEN;
  if (!token) throw new UsageError("--token (or ASSAY_TOKEN) is required with --server");
  const t = p.flags.timeout ?? String(DEFAULT_TIMEOUT_S);
  if (!/^\d{1,5}$/.test(t) || Number(t) < 1)
    throw new UsageError(`--timeout "${t}" is not a number of seconds (1 or more)`);
  return { server, token, timeoutS: Number(t) };
}

interface StepDoc {
  name: string;
  validator: string;
  config: Record<string, unknown>;
  is_active: boolean;
}
interface Doc {
  slug: string;
  name: string;
  description: string;
  status: string;
  allowed_file_types: string[];
  fail_fast: boolean;
  retention_days: number | null;
  steps: StepDoc[];
}
type Detail = Doc & { version: number };

async function api(r: Remote, method: string, path: string, body?: unknown) {
  // Without a signal, a server that accepts the connection and never answers holds the command
  // (and the CI job running it) until the job's own limit.
  const signal = AbortSignal.timeout(r.timeoutS * 1000);
  const late = () =>
    new AppError(
      504,
      "timeout",
      `${shownUrl(r.server)} did not answer within ${r.timeoutS} s (--timeout): ${method} ${path}`,
    );
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${r.server}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${r.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    text = await res.text();
  } catch (e) {
    if (signal.aborted) throw late();
    throw new AppError(503, "network_error", `cannot reach ${shownUrl(r.server)}: ${(e as Error).message}`);
  }
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: a proxy's page, say
  }
  const err = json as { code?: string; detail?: string; errors?: AppError["errors"] } | null;
  if (!res.ok)
    throw new AppError(
      res.status,
      err?.code ?? "http_error",
      err?.detail ? `${err.detail} (HTTP ${res.status})` : `the server answered HTTP ${res.status}`,
      Array.isArray(err?.errors) ? err.errors : [],
    );
  return { status: res.status, json };
}

const seg = encodeURIComponent;
const workflowPath = (org: string, slug: string) => `/orgs/${seg(org)}/workflows/${seg(slug)}/`;

/** A document as `assay workflows export` writes it: the same keys, in the same order. */
function documentOf(d: Detail) {
  return { kind: DOC_KIND, version: DOC_VERSION, ...definitionOf(d) };
}

function definitionOf(d: Doc): Doc {
  return {
    slug: d.slug,
    name: d.name,
    description: d.description,
    status: d.status,
    allowed_file_types: d.allowed_file_types,
    fail_fast: d.fail_fast,
    retention_days: d.retention_days,
    steps: d.steps.map((s) => ({
      name: s.name,
      validator: s.validator,
      config: s.config,
      is_active: s.is_active,
    })),
  };
}

/** The definition a PUT of `input` would store: absent fields take the API's defaults. */
function desiredOf(input: WorkflowInput, slug: string): Doc {
  return {
    slug,
    name: input.name ?? "",
    description: input.description ?? "",
    status: input.status ?? "active",
    allowed_file_types: input.allowed_file_types ?? [],
    fail_fast: input.fail_fast ?? true,
    retention_days: input.retention_days ?? null,
    steps: (input.steps ?? []).map((s) => ({
      name: s.name ?? "",
      validator: s.validator ?? "",
      config: s.config ?? {},
      is_active: s.is_active ?? true,
    })),
  };
}

/** Canonical JSON: key order does not count as a change. */
function same(a: unknown, b: unknown): boolean {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}

/** What differs, by field: `name`, `steps (2 → 3)`, `steps[1].config` … */
function changes(current: Doc, desired: Doc): string[] {
  const out: string[] = [];
  for (const k of Object.keys(desired) as (keyof Doc)[]) {
    if (k === "steps") continue;
    if (!same(current[k], desired[k])) out.push(k);
  }
  if (current.steps.length !== desired.steps.length)
    out.push(`steps (${current.steps.length} → ${desired.steps.length})`);
  else
    desired.steps.forEach((s, i) => {
      const c = current.steps[i]!;
      // The server pins the stored schemas a json_schema step references into its config
      // (`resources`): a file that names them only by $ref has not changed because of that.
      const config = s.config.resources === undefined ? { ...c.config, resources: undefined } : c.config;
      for (const k of ["name", "validator", "config", "is_active"] as const) {
        const cur = k === "config" ? JSON.parse(JSON.stringify(config)) : c[k];
        if (!same(cur, s[k])) out.push(`steps[${i}].${k}`);
      }
    });
  return out;
}

export async function exportRemote(r: Remote, org: string, slug: string) {
  return documentOf((await api(r, "GET", workflowPath(org, slug))).json as Detail);
}

/** Makes the server's workflow match `input`; returns one line saying what happened. */
export async function applyRemote(r: Remote, org: string, input: WorkflowInput): Promise<string> {
  if (!input.slug) throw new AppError(400, "invalid_request", "the document has no slug");
  const slug = input.slug;
  const desired = desiredOf(input, slug);
  let current: Detail | null = null;
  try {
    current = (await api(r, "GET", workflowPath(org, slug))).json as Detail;
  } catch (e) {
    if (!(e instanceof AppError && e.status === 404 && e.errorCode === "not_found")) throw e;
    // The org itself may be the missing thing: the POST below says so.
  }
  if (!current) {
    const created = (await api(r, "POST", `/orgs/${seg(org)}/workflows/`, desired)).json as Detail;
    return `${org}/${slug}: created (version ${created.version})`;
  }
  const diff = changes(definitionOf(current), desired);
  if (!diff.length) return `${org}/${slug}: unchanged (version ${current.version})`;
  const updated = (await api(r, "PUT", workflowPath(org, slug), desired)).json as Detail;
  return `${org}/${slug}: updated to version ${updated.version} (${diff.join(", ")})`;
}
