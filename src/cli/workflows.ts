// `assay workflows`: workflows as code. On the data dir: `export ORG SLUG`, `import ORG FILE`.
// Over the API (--server/ASSAY_SERVER, --token/ASSAY_TOKEN): `export ORG SLUG` and `apply ORG
// FILE…` (src/cli/workflows-remote.ts), so a pipeline can keep its workflows in git.
import { readFileSync } from "node:fs";
import { cliActor } from "../audit/actor.ts";
import { describeDb } from "../db/open.ts";
import { AppError } from "../errors.ts";
import { utf8Text } from "../lib/text.ts";
import { refuseDeletedOrg } from "../orgs/service.ts";
import { DocumentError, parseDocument, stringifyDocument, toDocument } from "../workflows/document.ts";
import { type Parsed, UsageError, allowOnly, unknownSubcommand } from "./args.ts";
import { print, readsOnly, withDeps } from "./context.ts";
import { out } from "./out.ts";
import { applyRemote, exportRemote, remoteOf } from "./workflows-remote.ts";

/** Why a workflow file that is not UTF-8 is refused (import, apply, validate --local). */
export const NOT_UTF8 = "not UTF-8 text (a workflow file is UTF-8)";

export const readDocument = async (file: string) => {
  let bytes: Uint8Array;
  try {
    bytes = file === "-" ? await new Response(Bun.stdin.stream()).bytes() : readFileSync(file);
  } catch (e) {
    // A path that names no readable file is a bad argument (exit 2), said as `validate` says it.
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "a directory" : (e as Error).message;
    throw new UsageError(`cannot read ${file}: ${why}`);
  }
  const text = utf8Text(bytes);
  if (text === null) throw new AppError(400, "invalid_request", `${file}: ${NOT_UTF8}`);
  try {
    return parseDocument(text);
  } catch (e) {
    if (e instanceof DocumentError)
      throw new AppError(400, "invalid_request", `${file}: not a workflow definition`, e.items);
    throw new AppError(400, "invalid_request", `${file}: ${(e as Error).message}`);
  }
};

function formatOf(p: Parsed): "yaml" | "json" {
  const format = p.flags.format ?? "yaml";
  if (format !== "yaml" && format !== "json") throw new UsageError("--format is yaml or json");
  return format;
}

export async function workflows(p: Parsed): Promise<number> {
  const [sub, org, ...args] = p.positionals;
  // Before anything reads ASSAY_SERVER: `workflows exprot` is a typo, not a missing token.
  if (sub !== "export" && sub !== "apply" && sub !== "import")
    throw sub
      ? unknownSubcommand(sub, ["export", "apply", "import"], "usage: assay workflows export|apply|import …")
      : new UsageError("name a subcommand: export, apply or import");
  // An explicit --data-dir (or --database-url) means the data dir, whatever ASSAY_SERVER says;
  // `import` always works on it. Only then is a server looked for: ASSAY_SERVER in a CI job's
  // environment made `import … --data-dir` demand a token, and `export … --data-dir` refuse it.
  const local = sub === "import" || p.flags.data_dir !== undefined || p.flags.database_url !== undefined;
  if (local && p.flags.server !== undefined && sub !== "import")
    throw new UsageError("--server and --data-dir (or --database-url) name two places: give one");
  const remote = local ? null : remoteOf(p);
  if (sub === "export") {
    allowOnly(p, ["format", ...(remote ? ["server", "token", "timeout"] : ["data_dir"])]);
    if (!org || args.length !== 1) throw new UsageError("usage: assay workflows export ORG SLUG");
    const format = formatOf(p);
    if (remote) {
      void out(stringifyDocument(await exportRemote(remote, org, args[0]!), format));
      return 0;
    }
    await withDeps(readsOnly(p, true), async (d) => {
      const o = await d.orgs.getBySlug(org);
      if (!o || o.deleted_at) throw new AppError(404, "not_found", `There is no organization "${org}".`);
      const { workflow, steps } = await d.workflows.load(o.id, args[0]!);
      void out(stringifyDocument(toDocument(workflow, steps), format));
    });
    return 0;
  }
  if (sub === "apply") {
    allowOnly(p, ["server", "token", "timeout"]);
    if (!org || !args.length)
      throw new UsageError("usage: assay workflows apply ORG FILE… --server URL --token T");
    if (!remote)
      throw new UsageError(
        "apply works over the API: give --server URL (or ASSAY_SERVER); on a data dir use import",
      );
    for (const file of args) print(await applyRemote(remote, org, await readDocument(file)));
    return 0;
  }
  if (sub === "import") {
    allowOnly(p, ["data_dir"]);
    if (!org || args.length !== 1) throw new UsageError("usage: assay workflows import ORG FILE");
    await withDeps(p, async (d) => {
      const o = await d.orgs.getBySlug(org);
      if (!o) throw new AppError(404, "not_found", `There is no organization "${org}".`);
      // Said as `orgs create` says it: the slug is a deleted org's, which restore brings back.
      refuseDeletedOrg(o, `\`assay orgs restore ${org}\``);
      const input = await readDocument(args[0]!);
      const exists = input.slug ? await d.workflowStore.find(o.id, input.slug) : null;
      const { workflow } = exists
        ? await d.workflows.update(o.id, input.slug!, input, true, cliActor())
        : await d.workflows.create(o.id, input, cliActor());
      // A file that matches the stored workflow changes nothing (the version stays): said so.
      const what = !exists ? "Created" : workflow.version === exists.version ? "Unchanged:" : "Replaced";
      print(
        `${what} workflow ${workflow.slug} (version ${workflow.version}) in ${org} (${describeDb(d.config)}).`,
      );
    });
    return 0;
  }
  throw new UsageError("name a subcommand: export, apply or import");
}
