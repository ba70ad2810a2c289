// Start a run from the browser: upload a file (multipart) or paste content (JSON envelope), the
// same request modes as any API client. The result page follows the run until it is final.
import { ApiError, api, enc, get } from "../api.ts";
import { checkbox, field, h, option } from "../dom.ts";
import { localError, showErrors } from "../forms.ts";
import { type Ctx, type Rendered, navigate } from "../router.ts";
import { can } from "../session.ts";
import type { Run, Workflow } from "../types.ts";
import { busy, heading, notice } from "../ui.ts";
import { mimeOf, uploadType } from "../upload-type.ts";

export async function runNewView(ctx: Ctx): Promise<Rendered> {
  const { org, wf } = ctx.params as { org: string; wf: string };
  // Not offered below the executor role, as the editor is not below author: the form's POST
  // would only answer 403.
  if (!can(org, "executor"))
    throw new ApiError(403, "permission_denied", "Starting a run needs the executor role.");
  const w = await get<Workflow>(`orgs/${enc(org)}/workflows/${enc(wf)}/`, ctx.signal);
  const file = h("input", { type: "file", name: "file", "data-field": "file" });
  const pasted = h("textarea", {
    name: "content",
    rows: "14",
    class: "mono",
    spellcheck: "false",
    "data-field": "content",
  });
  const type = h(
    "select",
    { name: "content_type", "data-field": "content_type" },
    w.allowed_file_types.map((t) => option(mimeOf(t), `${t} (${mimeOf(t)})`)),
  );
  const filename = h("input", {
    name: "filename",
    "data-field": "filename",
    placeholder: "e.g. order-42.json",
  });
  const modeUpload = h("input", {
    type: "radio",
    name: "mode",
    value: "upload",
    id: "mode-upload",
    checked: true,
  });
  const modePaste = h("input", { type: "radio", name: "mode", value: "paste", id: "mode-paste" });
  // Says which type goes out when it is not the browser's (uploadType): the file's extension.
  const sentAs = h("p", { class: "hint", hidden: true });
  file.addEventListener("change", () => {
    const f = file.files?.[0];
    const t = f ? uploadType(f.name, f.type, w.allowed_file_types) : null;
    sentAs.hidden = t === null;
    sentAs.textContent =
      t === null || !f ? "" : `Sent as ${t}${f.type ? ` (the browser calls it ${f.type})` : ""}.`;
  });
  const uploadBox = h(
    "div",
    { class: "mode-box" },
    field("File", file, `Accepted: ${w.allowed_file_types.join(", ")}. The type is taken from the file.`),
    sentAs,
  );
  const pasteBox = h(
    "div",
    { class: "mode-box" },
    field("Content type", type),
    field("Content", pasted),
    field("File name (optional)", filename),
  );
  const sync = () => {
    uploadBox.hidden = !modeUpload.checked;
    pasteBox.hidden = !modePaste.checked;
  };
  modeUpload.addEventListener("change", sync);
  modePaste.addEventListener("change", sync);
  sync();
  const wait = checkbox("Open the result page at once (do not wait for the run to finish)", {
    name: "async",
  });
  const submit = h("button", { type: "submit", class: "button" }, "Start run");
  const form: HTMLFormElement = h(
    "form",
    {
      class: "card",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const headers: Record<string, string> = {};
        if ((wait.querySelector("input") as HTMLInputElement).checked) headers.prefer = "respond-async";
        let opts: { raw?: BodyInit; body?: unknown; headers: Record<string, string> };
        if (modeUpload.checked) {
          const f = file.files?.[0];
          if (!f) {
            // By the file field, which takes focus, as a server's refusal of a field would be.
            showErrors(
              form,
              localError([
                {
                  field: "file",
                  code: "required",
                  message: "Choose a file to upload, or paste the content instead.",
                },
              ]),
            );
            return;
          }
          const fd = new FormData();
          fd.append("file", f, f.name);
          const t = uploadType(f.name, f.type, w.allowed_file_types);
          if (t) fd.append("content_type", t);
          opts = { raw: fd, headers };
        } else {
          const body: Record<string, string> = { content: pasted.value, content_type: type.value };
          if (filename.value.trim()) body.filename = filename.value.trim();
          opts = { body, headers };
        }
        try {
          const run = await busy(submit, () =>
            api<Run>("POST", `orgs/${enc(org)}/workflows/${enc(w.slug)}/runs/`, opts),
          );
          navigate(`/app/orgs/${org}/runs/${run.id}/`);
        } catch (err) {
          showErrors(form, err);
        }
      },
    },
    h(
      "fieldset",
      { class: "modes" },
      h("legend", null, "What to validate"),
      h("div", { class: "field check" }, modeUpload, h("label", { for: "mode-upload" }, "Upload a file")),
      h("div", { class: "field check" }, modePaste, h("label", { for: "mode-paste" }, "Paste content")),
    ),
    uploadBox,
    pasteBox,
    wait,
    h("div", { class: "actions" }, submit),
  );
  return {
    title: `Run ${w.name}`,
    body: h(
      "div",
      null,
      h(
        "p",
        { class: "crumbs" },
        h("a", { href: `/app/orgs/${org}/workflows/` }, "Workflows"),
        " / ",
        h("a", { href: `/app/orgs/${org}/workflows/${w.slug}/` }, w.name),
        " / ",
      ),
      heading(`Run “${w.name}”`),
      w.status !== "active"
        ? notice("warning", h("p", null, "This workflow is inactive: the run will be refused."))
        : null,
      form,
    ),
  };
}
