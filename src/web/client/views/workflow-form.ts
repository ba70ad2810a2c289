// Create or edit a workflow: settings and steps. Saved with POST (new) or PUT (the whole
// definition); the server checks every step config at save time and its errors[] are shown next
// to the field they name.
import { ApiError, api, enc, get } from "../api.ts";
import { checkbox, field, h, option } from "../dom.ts";
import { localError, showErrors } from "../forms.ts";
import { type Ctx, type Rendered, navigate } from "../router.ts";
import { can } from "../session.ts";
import { FILE_TYPES, type Validator, type Workflow } from "../types.ts";
import { busy, flash, heading } from "../ui.ts";
import { type StepDraft, buildConfig, defaultConfig, textsFor } from "./step-config.ts";
import { configEditor, limitsEditor } from "./step-editors.ts";
import { validators } from "./workflows.ts";

let keys = 0;
const slugify = (s: string) =>
  s
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^[^a-z]+|-+$/g, "")
    .slice(0, 63);

const validatorName = (cat: Validator[], slug: string) => cat.find((v) => v.slug === slug)?.name ?? slug;

function stepFieldset(
  d: StepDraft,
  i: number,
  count: number,
  cat: Validator[],
  redraw: (focus?: string) => void,
  move: (from: number, to: number) => void,
  remove: (i: number) => void,
): HTMLElement {
  const p = `steps[${i}]`;
  const v = cat.find((x) => x.slug === d.validator);
  const legend = h("legend", null);
  const title = () => legend.replaceChildren(`Step ${i + 1}${d.name ? `: ${d.name}` : ""}`);
  title();
  const name = h("input", {
    value: d.name,
    required: true,
    "data-field": `${p}.name`,
    oninput: (e: Event) => {
      d.name = (e.target as HTMLInputElement).value;
      title();
    },
  });
  const validator = h(
    "select",
    {
      "data-field": `${p}.validator`,
      value: d.validator,
      onchange: (e: Event) => {
        // A name that was only the old validator's name follows the new one.
        if (!d.name || d.name === v?.name) d.name = validatorName(cat, (e.target as HTMLSelectElement).value);
        d.validator = (e.target as HTMLSelectElement).value;
        d.config = defaultConfig(d.validator);
        d.texts = textsFor(d.validator, d.config);
        redraw(`${p}.validator`);
      },
    },
    v ? null : option(d.validator, d.validator),
    cat.map((x) => option(x.slug, x.name)),
  );
  const label = `step ${i + 1}`;
  return h(
    "fieldset",
    { class: "step", "data-field": p },
    legend,
    h(
      "div",
      { class: "grid2" },
      field("Step name", name),
      field(
        "Validator",
        validator,
        v ? `${v.description} Supports: ${v.supported_file_types.join(", ")}.` : undefined,
      ),
    ),
    checkbox("Active", {
      checked: d.is_active,
      "data-field": `${p}.is_active`,
      onchange: (e: Event) => (d.is_active = (e.target as HTMLInputElement).checked),
    }),
    h("div", { class: "config" }, configEditor(d, p)),
    limitsEditor(d, p),
    h(
      "div",
      { class: "actions step-actions" },
      i > 0
        ? h(
            "button",
            {
              type: "button",
              class: "button small secondary",
              "aria-label": `Move ${label} up`,
              onclick: () => move(i, i - 1),
            },
            "↑ Up",
          )
        : null,
      i < count - 1
        ? h(
            "button",
            {
              type: "button",
              class: "button small secondary",
              "aria-label": `Move ${label} down`,
              onclick: () => move(i, i + 1),
            },
            "↓ Down",
          )
        : null,
      h(
        "button",
        {
          type: "button",
          class: "button small danger",
          "aria-label": `Remove ${label}`,
          onclick: () => remove(i),
        },
        "Remove",
      ),
    ),
  );
}

export async function workflowFormView(ctx: Ctx): Promise<Rendered> {
  const { org, wf } = ctx.params as { org: string; wf?: string };
  if (!can(org, "author"))
    throw new ApiError(403, "permission_denied", "Creating and editing workflows needs the author role.");
  const [w, cat] = await Promise.all([
    wf ? get<Workflow>(`orgs/${enc(org)}/workflows/${enc(wf)}/`, ctx.signal) : null,
    validators(),
  ]);
  const steps: StepDraft[] = (w?.steps ?? []).map((s) => ({
    key: ++keys,
    name: s.name,
    validator: s.validator,
    is_active: s.is_active,
    config: structuredClone(s.config),
    texts: textsFor(s.validator, s.config),
  }));
  let slugTouched = !!w;

  const name = h("input", { value: w?.name ?? "", required: true, "data-field": "name" });
  const slug = h("input", {
    value: w?.slug ?? "",
    required: true,
    maxlength: "63",
    pattern: "[a-z][a-z0-9_\\-]*",
    class: "mono",
    "data-field": "slug",
    oninput: () => (slugTouched = true),
  });
  name.addEventListener("input", () => {
    if (!slugTouched) slug.value = slugify(name.value);
  });
  const description = h("textarea", {
    rows: "2",
    "data-field": "description",
    value: w?.description ?? "",
  });
  const types = FILE_TYPES.map((t) =>
    h("input", {
      type: "checkbox",
      id: `ft-${t}`,
      value: t,
      checked: w ? w.allowed_file_types.includes(t) : t === "JSON",
    }),
  );
  const failFast = checkbox("Fail fast: skip later steps after a failed one", {
    checked: w?.fail_fast ?? true,
    "data-field": "fail_fast",
  });
  const retention = h("input", {
    type: "number",
    min: "0",
    // The server's bound (docs/limits.md): the browser says so before the request does.
    max: "36500",
    step: "1",
    "data-field": "retention_days",
    value: w?.retention_days == null ? "" : String(w.retention_days),
  });

  const list = h("div", { class: "step-list", "data-field": "steps" });
  const redraw = (focusField?: string) => {
    list.replaceChildren(...steps.map((d, i) => stepFieldset(d, i, steps.length, cat, redraw, move, remove)));
    if (!steps.length)
      list.append(
        h("p", { class: "empty" }, "No steps yet: a workflow needs at least one active step to accept runs."),
      );
    if (focusField) (list.querySelector(`[data-field="${focusField}"]`) as HTMLElement | null)?.focus();
  };
  const move = (from: number, to: number) => {
    const [d] = steps.splice(from, 1);
    steps.splice(to, 0, d!);
    redraw();
    (
      list.querySelectorAll("fieldset.step")[to]?.querySelector("legend") as HTMLElement | null
    )?.scrollIntoView({ block: "nearest" });
    (list.querySelectorAll("fieldset.step")[to]?.querySelector("input") as HTMLElement | null)?.focus();
  };
  const remove = (i: number) => {
    steps.splice(i, 1);
    redraw();
    addStep.focus();
  };
  const addStep = h(
    "button",
    {
      type: "button",
      class: "button secondary",
      onclick: () => {
        const validator = cat.some((v) => v.slug === "json_schema")
          ? "json_schema"
          : (cat[0]?.slug ?? "syntax");
        const config = defaultConfig(validator);
        steps.push({
          key: ++keys,
          name: validatorName(cat, validator),
          validator,
          is_active: true,
          config,
          texts: textsFor(validator, config),
        });
        redraw(`steps[${steps.length - 1}].name`);
      },
    },
    "Add step",
  );
  redraw();

  const submit = h("button", { type: "submit", class: "button" }, w ? "Save changes" : "Create workflow");
  const form: HTMLFormElement = h(
    "form",
    {
      class: "editor",
      novalidate: true,
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const problems: { field: string; code: string; message: string }[] = [];
        const body: Record<string, unknown> = {
          slug: slug.value.trim(),
          name: name.value.trim(),
          description: description.value,
          allowed_file_types: types.filter((t) => t.checked).map((t) => t.value),
          fail_fast: (failFast.querySelector("input") as HTMLInputElement).checked,
          retention_days: retention.value === "" ? null : Number(retention.value),
          steps: steps.map((d, i) => ({
            name: d.name.trim(),
            validator: d.validator,
            is_active: d.is_active,
            config: buildConfig(d, `steps[${i}]`, problems),
          })),
        };
        if (w) body.status = w.status;
        if (problems.length) return showErrors(form, localError(problems));
        try {
          const saved = await busy(submit, () =>
            w
              ? // Conditional on the version this form was loaded from: another author's save
                // meanwhile is a 412, not silently undone by this one (RFC 9110 §13.1.1).
                api<Workflow>("PUT", `orgs/${enc(org)}/workflows/${enc(w.slug)}/`, {
                  body,
                  headers: { "if-match": `"${w.version}"` },
                })
              : api<Workflow>("POST", `orgs/${enc(org)}/workflows/`, { body }),
          );
          flash(
            "success",
            w
              ? `Saved: “${saved.name}” is now at version ${saved.version}.`
              : `Workflow “${saved.name}” created.`,
          );
          navigate(`/app/orgs/${org}/workflows/${saved.slug}/`);
        } catch (err) {
          showErrors(
            form,
            err instanceof ApiError && err.status === 412
              ? new ApiError(
                  412,
                  err.code,
                  `Someone else saved this workflow after you opened it (you edited version ${w?.version}). Your changes are not saved: copy what you need, reload the page and edit the current version.`,
                )
              : err,
          );
        }
      },
    },
    h(
      "fieldset",
      null,
      h("legend", null, "Settings"),
      h(
        "div",
        { class: "grid2" },
        field("Name", name),
        field("Slug", slug, "Used in API paths: lowercase letters, digits, - and _, starting with a letter."),
      ),
      field("Description", description),
      h(
        "fieldset",
        { class: "inline-checks", "data-field": "allowed_file_types" },
        h("legend", null, "Allowed file types"),
        types.map((t) => h("span", { class: "check" }, t, h("label", { for: t.id }, t.value))),
      ),
      failFast,
      field(
        "Keep submitted content for (days)",
        retention,
        "Empty: the instance default. Findings are always kept.",
      ),
    ),
    h("h2", null, "Steps"),
    list,
    h("div", { class: "actions" }, addStep),
    h(
      "div",
      { class: "actions sticky" },
      h(
        "a",
        {
          class: "button secondary",
          href: w ? `/app/orgs/${org}/workflows/${w.slug}/` : `/app/orgs/${org}/workflows/`,
        },
        "Cancel",
      ),
      submit,
    ),
  );
  return {
    title: w ? `Edit ${w.name}` : "New workflow",
    body: h(
      "div",
      null,
      h(
        "p",
        { class: "crumbs" },
        h("a", { href: `/app/orgs/${org}/workflows/` }, "Workflows"),
        " / ",
        w ? [h("a", { href: `/app/orgs/${org}/workflows/${w.slug}/` }, w.name), " / "] : null,
      ),
      heading(w ? `Edit “${w.name}”` : "New workflow"),
      form,
    ),
  };
}
