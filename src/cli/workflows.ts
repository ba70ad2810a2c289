// `assay workflows export ORG SLUG` and `assay workflows import ORG FILE`.
import { readFileSync } from "node:fs";
import { cliActor } from "../audit/actor.ts";
import { AppError } from "../errors.ts";
import { parseDocument, stringifyDocument, toDocument } from "../workflows/document.ts";
import { type Parsed, UsageError, allowOnly } from "./args.ts";
import { print, withDeps } from "./context.ts";

export async function workflows(p: Parsed) {
  const [sub, org, arg] = p.positionals;
  allowOnly(p, ["format", "data_dir"]);
  if ((sub !== "export" && sub !== "import") || !org || !arg || p.positionals.length !== 3)
    throw new UsageError("usage: assay workflows export ORG SLUG [--format yaml|json] | import ORG FILE");
  await withDeps(p, async (d) => {
    const o = await d.orgs.getBySlug(org);
    if (!o || o.deleted_at) throw new AppError(404, "not_found", `There is no organization "${org}".`);
    if (sub === "export") {
      const format = (p.flags.format ?? "yaml") as "yaml" | "json";
      if (format !== "yaml" && format !== "json") throw new UsageError("--format is yaml or json");
      const { workflow, steps } = await d.workflows.load(o.id, arg);
      process.stdout.write(stringifyDocument(toDocument(workflow, steps), format));
      return;
    }
    let input: ReturnType<typeof parseDocument>;
    try {
      input = parseDocument(arg === "-" ? await Bun.stdin.text() : readFileSync(arg, "utf8"));
    } catch (e) {
      throw new AppError(400, "invalid_request", `${arg}: ${(e as Error).message}`);
    }
    const exists = input.slug ? await d.workflowStore.find(o.id, input.slug) : null;
    const { workflow } = exists
      ? await d.workflows.update(o.id, input.slug!, input, true, cliActor())
      : await d.workflows.create(o.id, input, cliActor());
    print(
      `${exists ? "Replaced" : "Created"} workflow ${workflow.slug} (version ${workflow.version}) in ${org}.`,
    );
  });
}
