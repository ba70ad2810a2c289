// Validation through a server: submit each file (multipart, so any file name survives), take the
// run from a 201, or poll it after a 202, sleeping what Retry-After says. Refusals that concern
// every file (bad token, no access, no such workflow) stop the whole command.
import { setTimeout as sleep } from "node:timers/promises";
import type { ReportRun } from "../../reports/types.ts";
import { isFinal, type RunStatus } from "../../runs/types.ts";
import { VERSION } from "../../version.ts";
import { shownUrl } from "../shown-url.ts";
import type { InputFile } from "./files.ts";
import { type FileResult, type RequestError, ValidateError, errorText } from "./result.ts";

export interface RemoteOptions {
  server: string;
  token: string;
  org: string;
  workflow: string;
  /** Seconds the server may hold the request (Prefer: wait=N); 0 asks for 202 at once. */
  waitS: number | null;
  timeoutS: number;
}

const MAX_RETRIES = 5;
/** Findings per page when a run's findings are read beyond the run answer (the API's maximum). */
const PAGE = 200;
const FATAL = new Set([401, 403, 404]);
const RETRYABLE = new Set([429, 503]);
const seg = encodeURIComponent;

type Got = { run: ReportRun } | { error: RequestError };

/** Retry-After as seconds (delta or HTTP date), clamped so a bad value neither spins nor hangs. */
export function retryAfterMs(value: string | null, fallbackS = 1): number {
  let s = fallbackS;
  if (value && /^\d+$/.test(value.trim())) s = Number(value.trim());
  else if (value && !Number.isNaN(Date.parse(value))) s = (Date.parse(value) - Date.now()) / 1000;
  return Math.round(Math.min(Math.max(s, 0.1), 60) * 1000);
}

async function errorOf(res: Response): Promise<RequestError> {
  const text = await res.text().catch(() => "");
  try {
    const b = JSON.parse(text) as Partial<RequestError>;
    if (typeof b.code === "string" && typeof b.detail === "string")
      return {
        status: res.status,
        code: b.code,
        detail: b.detail,
        errors: Array.isArray(b.errors) ? b.errors : [],
      };
  } catch {
    // not the error object: a proxy's page, say
  }
  return {
    status: res.status,
    code: "http_error",
    detail: `The server answered HTTP ${res.status}.`,
    errors: [],
  };
}

/**
 * The same words on Node and on Bun (the light client runs on both): their fetch errors differ
 * (Node: "fetch failed" with the system code on `cause`; Bun: the code on the error itself).
 */
function networkText(e: unknown): string {
  const err = e as { code?: unknown; message?: string; cause?: { code?: unknown; message?: string } };
  const code = [err?.cause?.code, err?.code].find((c) => typeof c === "string" && /^E[A-Z]+$/.test(c));
  if (code) return `could not reach the server (${code})`;
  return err?.cause?.message ?? err?.message ?? String(e);
}

const networkError = (e: unknown): RequestError => ({
  status: null,
  code: "network_error",
  detail: networkText(e),
  errors: [],
});

export function createRemote(o: RemoteOptions) {
  const headers = {
    authorization: `Bearer ${o.token}`,
    accept: "application/json",
    "user-agent": `assay-cli/${VERSION}`,
  };
  const runsUrl = `${o.server}/api/v1/orgs/${seg(o.org)}/workflows/${seg(o.workflow)}/runs/`;
  // Polled by id on --server rather than by Location: behind a proxy, the public base URL the
  // server puts in Location may not be reachable from where CI runs.
  const runUrl = (id: string) => `${o.server}/api/v1/orgs/${seg(o.org)}/runs/${seg(id)}/`;

  /** What a request that the deadline cut off returns: the command's own timeout (exit 2). */
  const noAnswer = (method: string, url: string): RequestError => ({
    status: null,
    code: "timeout",
    detail: `The server did not answer within ${o.timeoutS} s (--timeout): ${method} ${shownUrl(url)}`,
    errors: [],
  });

  /**
   * fetch with retries on 429/503 (and network errors, made safe by the Idempotency-Key). Each
   * attempt, its body included, is aborted at the deadline: without a signal a server that
   * accepts the connection and never answers held the command for the runtime's own limit
   * (Bun 300 s, Node's headers timeout), whatever --timeout said. The answer comes back read
   * into memory, so that no later body read can outlive the deadline either.
   */
  async function send(
    url: string,
    init: () => RequestInit,
    deadline: number,
  ): Promise<Response | RequestError> {
    for (let attempt = 0; ; attempt++) {
      const req = init();
      const signal = AbortSignal.timeout(Math.max(deadline - Date.now(), 1));
      let res: Response;
      try {
        const got = await fetch(url, { ...req, signal });
        const body = await got.arrayBuffer();
        res = new Response(body.byteLength ? body : null, { status: got.status, headers: got.headers });
      } catch (e) {
        if (signal.aborted) return noAnswer(req.method ?? "GET", url);
        if (attempt >= 2 || Date.now() > deadline) return networkError(e);
        await sleep(Math.min(500 * 2 ** attempt, Math.max(deadline - Date.now(), 0)));
        continue;
      }
      const retry = RETRYABLE.has(res.status) || (res.status === 409 && res.headers.get("retry-after"));
      const pause = retryAfterMs(res.headers.get("retry-after"), 2 ** attempt);
      // A pause that would end past the deadline is not taken: this answer is the last one.
      if (!retry || attempt >= MAX_RETRIES || Date.now() + pause > deadline) return res;
      await sleep(pause);
    }
  }

  async function poll(run: ReportRun, retryAfter: string | null, deadline: number): Promise<Got> {
    let wait = retryAfterMs(retryAfter);
    let current = run;
    while (!isFinal(current.status as RunStatus)) {
      if (Date.now() + wait > deadline)
        return {
          error: {
            status: null,
            code: "timeout",
            detail: `The run ${run.id} did not finish within ${o.timeoutS} s (still ${current.status}); see ${shownUrl(runUrl(run.id))}`,
            errors: [],
          },
        };
      await sleep(wait);
      const res = await send(runUrl(run.id), () => ({ headers }), deadline);
      if (!(res instanceof Response)) return { error: res };
      if (!res.ok) return { error: await errorOf(res) };
      current = (await res.json()) as ReportRun;
      wait = retryAfterMs(res.headers.get("retry-after"));
    }
    return { run: current };
  }

  return async function validateRemote(f: InputFile): Promise<FileResult> {
    const deadline = Date.now() + o.timeoutS * 1000;
    const key = crypto.randomUUID();
    const result = (x: Got): FileResult => ({
      file: f.label,
      contentType: f.contentType,
      run: "run" in x ? x.run : null,
      error: "error" in x ? x.error : null,
    });
    const init = () => {
      const form = new FormData();
      form.append("file", new Blob([f.bytes as BlobPart], { type: f.contentType }), f.name);
      form.append("filename", f.name);
      form.append("content_type", f.contentType);
      const h: Record<string, string> = { ...headers, "idempotency-key": key };
      if (o.waitS !== null) h.prefer = o.waitS === 0 ? "respond-async" : `wait=${o.waitS}`;
      return { method: "POST", headers: h, body: form };
    };
    const res = await send(runsUrl, init, deadline);
    if (!(res instanceof Response)) return result({ error: res });
    if (res.status !== 201 && res.status !== 202) {
      const error = await errorOf(res);
      if (FATAL.has(res.status)) throw new ValidateError(`${f.label}: ${errorText(error)}`);
      return result({ error });
    }
    const run = (await res.json()) as ReportRun;
    const got = res.status === 201 ? { run } : await poll(run, res.headers.get("retry-after"), deadline);
    return result("run" in got ? await complete(got.run, deadline) : got);
  };

  /**
   * A run answer carries the first 1000 findings (the server's bound); a step with more has a
   * findings_count above its list, and the rest are read page by page from …/findings/.
   */
  async function complete(run: ReportRun, deadline: number): Promise<Got> {
    for (const step of run.steps) {
      const total = step.findings_count ?? step.findings.length;
      for (let page = Math.floor(step.findings.length / PAGE) + 1; step.findings.length < total; page++) {
        const url = `${runUrl(run.id)}findings/?step=${step.order}&page=${page}&page_size=${PAGE}`;
        const res = await send(url, () => ({ headers }), deadline);
        if (!(res instanceof Response)) return { error: res };
        if (!res.ok) return { error: await errorOf(res) };
        const body = (await res.json()) as {
          results: (ReportRun["steps"][number]["findings"][number] & object)[];
        };
        if (!body.results.length) break;
        // Pages of 200 from offset 0; the answer's first findings are a prefix of them.
        const have = step.findings.length;
        const from = (page - 1) * PAGE;
        for (const [k, f] of body.results.entries())
          if (from + k >= have)
            step.findings.push({
              severity: f.severity,
              code: f.code,
              message: f.message,
              path: f.path,
              line: f.line,
              column: f.column,
              rule: f.rule,
            });
      }
    }
    return { run };
  }
}
