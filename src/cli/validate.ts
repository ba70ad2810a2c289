// `assay validate FILE… --workflow SLUG --org ORG [--server URL] [--token T]` checks files
// through a server; `assay validate --local --workflow-file WORKFLOW.yaml FILE…` checks them in
// this process from an exported workflow document (pre-commit hooks). Exit codes differ from the
// admin commands on purpose, for CI: 0 every run succeeded, 1 a run failed, 2 anything could
// not be validated (bad arguments, network, auth, server error).
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { AppError } from "../errors.ts";
import { visible } from "../reports/escape.ts";
import { type Parsed, UsageError, allowOnly } from "./args.ts";
import { type InputFile, eachInput, planInputs, readInput } from "./validate/files.ts";
import { CLI_FORMATS, type CliFormat, type OutputContext, render, renderText } from "./validate/output.ts";
import { createProgress } from "./validate/progress.ts";
import { createRemote } from "./validate/remote.ts";
import { err, out } from "./out.ts";
import { serverBase, shownUrl } from "./shown-url.ts";
import { type FailOn, type FileResult, ValidateError, exitCode } from "./validate/result.ts";

/**
 * The in-process engine of `--local` (src/cli/validate/local.ts), passed in by the caller: the
 * light client (src/cli/light.ts) has none, which keeps every validator out of its bundle.
 */
export interface LocalEngine {
  load(file: string): Promise<unknown>;
  create(workflow: never): (f: InputFile) => Promise<FileResult>;
}
type LoadedWorkflow = { draft: { slug: string } };

const COMMON = ["format", "output", "fail_on", "content_type", "jobs"];
const REMOTE = ["workflow", "org", "server", "token", "wait", "timeout"];

function intFlag(p: Parsed, name: string, min: number, max: number, def: number | null): number | null {
  const v = p.flags[name];
  if (v === undefined) return def;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max)
    throw new UsageError(`--${name.replaceAll("_", "-")} is a whole number from ${min} to ${max}`);
  return Number(v);
}

function serverUrl(p: Parsed): string {
  const raw = p.flags.server ?? process.env.ASSAY_SERVER;
  if (!raw) throw new UsageError("--server URL (or ASSAY_SERVER) is required; or use --local");
  return serverBase(raw);
}

/** `prefix`: how messages name the command, `assay validate` or `assay-validate`. */
export async function validate(
  p: Parsed,
  engine: LocalEngine | null,
  prefix = "assay validate",
): Promise<number> {
  const local = p.bools.has("local");
  if (local && !engine)
    throw new UsageError(
      `--local is not available in ${prefix}; use assay validate --local (the server binary)`,
    );
  allowOnly(p, ["help", ...COMMON, ...(local ? ["local", "workflow_file"] : REMOTE)]);
  if (!p.positionals.length) throw new UsageError("name at least one FILE to validate");
  const format = (p.flags.format ?? "text") as CliFormat;
  if (!CLI_FORMATS.includes(format)) throw new UsageError(`--format is one of ${CLI_FORMATS.join(", ")}`);
  const failOn = (p.flags.fail_on ?? "error") as FailOn;
  if (failOn !== "error" && failOn !== "warning") throw new UsageError("--fail-on is error or warning");
  const jobs = intFlag(p, "jobs", 1, 32, 4)!;
  let run: (f: InputFile) => Promise<FileResult>;
  let workflow: string;
  let reportUrl: OutputContext["reportUrl"];
  if (local) {
    if (!p.flags.workflow_file) throw new UsageError("--local needs --workflow-file WORKFLOW.yaml");
  } else {
    for (const k of ["workflow", "org"]) if (!p.flags[k]) throw new UsageError(`--${k} is required`);
  }
  const server = local ? "" : serverUrl(p);
  const token = local ? "" : (p.flags.token ?? process.env.ASSAY_TOKEN);
  if (!local && !token) throw new UsageError("--token (or ASSAY_TOKEN) is required");

  try {
    if (local) {
      const w = (await engine!.load(p.flags.workflow_file!)) as LoadedWorkflow;
      workflow = w.draft.slug;
      run = engine!.create(w as never);
    } else {
      workflow = p.flags.workflow!;
      const org = p.flags.org!;
      run = createRemote({
        server,
        token: token!,
        org,
        workflow,
        waitS: intFlag(p, "wait", 0, 60, null),
        timeoutS: intFlag(p, "timeout", 1, 86_400, 600)!,
      });
      reportUrl = (id) =>
        `${shownUrl(server)}/api/v1/orgs/${encodeURIComponent(org)}/runs/${id}/report/?format=html`;
    }
    const inputs = planInputs(p.positionals, p.flags.content_type);
    const progress = createProgress(inputs.length);
    let results: FileResult[];
    try {
      results = await eachInput(inputs, local ? 1 : jobs, readInput, async (f) => {
        const r = await run(f);
        progress.done(f.label);
        return r;
      });
    } finally {
      progress.end();
    }
    const ctx: OutputContext = { results, failOn, workflow, reportUrl };
    const body = render(format, ctx);
    if (p.flags.output) {
      try {
        // Into a directory that may not exist yet (a CI workspace's reports/).
        await mkdir(dirname(p.flags.output), { recursive: true });
        await writeFile(p.flags.output, body);
      } catch (e) {
        throw new ValidateError(`cannot write ${p.flags.output}: ${(e as Error).message}`);
      }
      // The report went to a file: the log still gets the human summary (docs/ci-usage.md), in
      // every format, text included.
      await out(renderText(ctx));
    } else await out(body);
    return exitCode(results, failOn);
  } catch (e) {
    if (e instanceof UsageError) {
      // Printed by the caller; it may quote a file name.
      e.message = visible(e.message);
      throw e;
    }
    // These quote file names, the server's answers and the workflow document: shown escaped.
    if (e instanceof AppError)
      void err(
        `${prefix}: ${visible(e.message)}\n${e.errors.map((x) => `  ${visible(`${x.field}: ${x.message}`)}\n`).join("")}`,
      );
    else void err(`${prefix}: ${visible((e as Error).message)}\n`);
    return 2;
  }
}
