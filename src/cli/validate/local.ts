// `assay validate --local`: the same validation without a server, from an exported workflow
// document. It takes the server's path through the same code — intake's file typing, the run
// service's file-type check, the worker loop's step runner (fail-fast, findings cap) and the run
// summary — so a file gets the same findings here as on the server. What it lacks is the pool's
// per-step time limit: a validator runs to the end in this process.
import { readFileSync } from "node:fs";
import { ConfigError, envName, loadConfig } from "../../config.ts";
import { AppError } from "../../errors.ts";
import { CONFIG_CACHE_SIZE, type JobDeps, runJob } from "../../jobs/worker-loop.ts";
import { Lru } from "../../jobs/lru.ts";
import { utf8Text } from "../../lib/text.ts";
import type { StepOutcome } from "../../jobs/protocol.ts";
import type { ReportRun } from "../../reports/types.ts";
import { charsetOf, decodeText, utf16ByBom } from "../../runs/intake/charsets.ts";
import { classify, fileTypeOf, parseMediaType } from "../../runs/intake/filetypes.ts";
import { checkFileType } from "../../runs/service.ts";
import { applyOutcome, finalStatus, pendingSteps, summarize } from "../../runs/summary.ts";
import { loadValidator } from "../../validators/loader.ts";
import { DEFAULT_MAX_FINDINGS, prepareChecks } from "../../validators/registry.ts";
import type { FileType } from "../../validators/types.ts";
import { parseDocument } from "../../workflows/document.ts";
import { checkDraft } from "../../workflows/check.ts";
import type { WorkflowDraft, WorkflowVersion } from "../../workflows/types.ts";
import type { InputFile } from "./files.ts";
import { type FileResult, type RequestError, ValidateError } from "./result.ts";

export interface LocalWorkflow {
  draft: WorkflowDraft;
  def: WorkflowVersion;
}

/**
 * The server's settings a local run reads from this process's environment too, the validators'
 * bounds (src/validators/env-limit.ts): refused as `assay serve` refuses them. A bad value was
 * the default without a word (ASSAY_MAX_YAML_BYTES=4M, or -1 meant as "no limit", was 4 MiB).
 */
const LOCAL_SETTINGS = ["max_yaml_bytes", "max_schematron_elements"] as const;

export function checkLocalSettings(env: Record<string, string | undefined>): void {
  const only = Object.fromEntries(LOCAL_SETTINGS.map((k) => [envName(k), env[envName(k)]]));
  try {
    loadConfig(only);
  } catch (e) {
    // One line: the command's messages are shown escaped, a line break as \x0a.
    if (e instanceof ConfigError) throw new ValidateError(e.problems.join("; "));
    throw e;
  }
}

/** Reads and checks a workflow document as `assay workflows import` would (AppError 400 if bad). */
export async function loadLocalWorkflow(path: string): Promise<LocalWorkflow> {
  checkLocalSettings(process.env);
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new ValidateError(`cannot read the workflow file ${path}: ${(e as Error).message}`);
  }
  const text = utf8Text(bytes);
  if (text === null) throw new ValidateError(`${path}: not UTF-8 text (a workflow file is UTF-8)`);
  let b: ReturnType<typeof parseDocument>;
  try {
    b = parseDocument(text);
  } catch (e) {
    throw new ValidateError(`${path}: ${(e as Error).message}`);
  }
  const draft: WorkflowDraft = {
    slug: b.slug ?? "",
    name: b.name ?? "",
    description: b.description ?? "",
    status: b.status ?? "active",
    allowed_file_types: (b.allowed_file_types ?? []) as FileType[],
    fail_fast: b.fail_fast ?? true,
    retention_days: b.retention_days ?? null,
    steps: (b.steps ?? []).map((s) => ({
      id: null,
      name: s.name ?? "",
      validator: s.validator ?? "",
      config: s.config ?? {},
      is_active: s.is_active ?? true,
    })),
  };
  await prepareChecks(draft.steps.map((s) => s.validator));
  checkDraft(draft);
  const def: WorkflowVersion = {
    workflow_id: 0,
    version: 0,
    slug: draft.slug,
    allowed_file_types: draft.allowed_file_types,
    fail_fast: draft.fail_fast,
    steps: draft.steps.map((s, i) => ({ ...s, id: i + 1, order: i + 1 })),
  };
  return { draft, def };
}

const refused = (e: AppError): RequestError => ({
  status: e.status,
  code: e.errorCode,
  detail: e.message,
  errors: e.errors,
});

/** The checks the server makes before it stores a submission (CONTRACT §4, 5 to 8). */
function admit(w: LocalWorkflow, f: InputFile): { fileType: FileType; charset: string } {
  if (w.draft.status !== "active")
    throw new AppError(409, "workflow_inactive", "The workflow is inactive; re-enable it to accept runs.");
  if (!w.def.steps.some((s) => s.is_active))
    throw new AppError(400, "no_workflow_steps", "The workflow has no active steps.");
  const media = parseMediaType(f.contentType);
  const declared = media ? fileTypeOf(media.mime) : null;
  if (!media || !declared)
    throw new AppError(
      415,
      "unsupported_media_type",
      `The content type "${f.contentType}" is not supported.`,
    );
  // As the server reads it (src/runs/intake/charsets.ts): us-ascii strict, iso-8859-1 byte for
  // byte, a bare utf-16 by its BOM, and without a charset a UTF-16 BOM as UTF-16.
  const label = media.charset ?? (utf16ByBom(declared, f.bytes) ? "utf-16" : "utf-8");
  const charset = charsetOf(label, f.bytes);
  if (!charset)
    throw new AppError(415, "unsupported_media_type", `The charset "${media.charset}" is not supported.`);
  let text: string;
  try {
    text = decodeText(f.bytes, charset);
  } catch {
    throw new AppError(400, "invalid_request", "The run request is invalid.", [
      { field: "charset", code: "invalid_encoding", message: `The content is not valid ${charset}.` },
    ]);
  }
  const fileType = classify(declared, text);
  checkFileType(w.def, fileType);
  return { fileType, charset };
}

export function createLocal(w: LocalWorkflow) {
  // Shared by every file: each step's config is compiled once, as a server worker would.
  const cache: JobDeps["cache"] = new Lru(CONFIG_CACHE_SIZE);
  const active = w.def.steps.filter((s) => s.is_active);

  return async function validateLocal(f: InputFile): Promise<FileResult> {
    const base = { file: f.label, contentType: f.contentType };
    let admitted: ReturnType<typeof admit>;
    try {
      admitted = admit(w, f);
    } catch (e) {
      if (e instanceof AppError) return { ...base, run: null, error: refused(e) };
      throw e;
    }
    const createdAt = new Date().toISOString();
    const started = performance.now();
    const outcomes: StepOutcome[] = [];
    await runJob(
      {
        jobId: "local",
        bytes: f.bytes.slice().buffer as ArrayBuffer,
        charset: admitted.charset,
        fileType: admitted.fileType,
        filename: f.name,
        failFast: w.def.fail_fast,
        steps: active.map((s) => ({
          key: String(s.order),
          validator: s.validator,
          config: s.config,
          maxFindings: Number(s.config.max_findings ?? DEFAULT_MAX_FINDINGS),
        })),
      },
      {
        // As a worker does: loads each validator, and libxml2 for those that may parse XML.
        lookup: loadValidator,
        cache,
        post: (m) => {
          if (m.type === "step_end") outcomes[m.index] = m.outcome;
        },
        requestConfig: () => Promise.reject(new Error("every step carries its config")),
      },
    );
    const pending = pendingSteps(active);
    const steps = applyOutcome(pending, { status: "completed", steps: outcomes });
    const durationMs = Math.round(performance.now() - started);
    const run: ReportRun = {
      id: "",
      url: null,
      workflow: { slug: w.draft.slug, version: 0 },
      submission: { filename: f.name, content_type: f.contentType, file_type: admitted.fileType },
      status: finalStatus("completed", steps),
      summary: summarize(steps),
      steps,
      error: steps.find((s) => s.error)?.error ?? null,
      created_at: createdAt,
      finished_at: new Date().toISOString(),
      duration_ms: durationMs,
    };
    return { ...base, run, error: null };
  };
}
