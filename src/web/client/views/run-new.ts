// Start a run from the browser: upload a file (multipart) or paste content (JSON envelope), the
// same request modes as any API client. The result page follows the run until it is final.
import { api, enc, get } from "../api.ts";
import { checkbox, field, h, option } from "../dom.ts";
import { showErrors } from "../forms.ts";
import { type Ctx, type Rendered, navigate } from "../router.ts";
import type { Run, Workflow } from "../types.ts";
import { busy, heading, notice } from "../ui.ts";

const MIME: Record<string, string> = {
  JSON: "application/json",
  XML: "application/xml",
  YAML: "application/yaml",
  CSV: "text/csv",
  TEXT: "text/plain",
};

export async function runNewView(ctx: Ctx): Promise<Rendered> {
  const { org, wf } = ctx.params as { org: string; wf: string };
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
    w.allowed_file_types.map((t) => option(MIME[t] ?? "text/plain", `${t} (${MIME[t]})`)),
  );
  const filename = h("input", {
    name: "filename",
    maxlength: "255",
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
  const uploadBox = h(
    "div",
    { class: "mode-box" },
    field("File", file, `Accepted: ${w.allowed_file_types.join(", ")}. The type is taken from the file.`),
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
            showErrors(form, new Error("Choose a file to upload, or paste the content instead."));
            return;
          }
          const fd = new FormData();
          fd.append("file", f, f.name);
          // Browsers guess no type for .yaml or .csv on some systems: name it from the extension.
          if (!f.type) fd.append("content_type", guess(f.name, w.allowed_file_types));
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

function guess(name: string, allowed: string[]): string {
  const ext = name.split(".").pop()?.toLowerCase() ?? "";
  const byExt: Record<string, string> = {
    json: "JSON",
    xml: "XML",
    xsd: "XML",
    yaml: "YAML",
    yml: "YAML",
    csv: "CSV",
    txt: "TEXT",
  };
  return MIME[byExt[ext] ?? allowed[0] ?? "TEXT"] ?? "text/plain";
}
