// A self-contained HTML report a person can open or attach: inline CSS, no script, no external
// resource (a CSP meta tag forbids them even if a future change slipped one in), and every piece
// of text escaped — findings quote submitted data.
import { VERSION } from "../version.ts";
import { escapeHtml as h } from "./escape.ts";
import { HTML_STYLE } from "./html-style.ts";
import { countsText, location, plural } from "./lines.ts";
import { type ReportItem, type ReportStep, omittedOf, omittedText } from "./types.ts";

const ms = (v: number | null) => (v === null ? "—" : v < 1000 ? `${v} ms` : `${(v / 1000).toFixed(2)} s`);
const badge = (status: string) => `<span class="badge b-${h(status)}">${h(status.replace("_", " "))}</span>`;

function step(file: string, s: ReportStep): string {
  const head = `<h3>${badge(s.status)}${s.order}. ${h(s.name)} <span class="v">${h(s.validator)}</span> <span class="dur">${ms(s.duration_ms)}</span></h3>`;
  const omitted = omittedOf(s);
  const error =
    (s.error ? `<p class="note">${h(s.error)}</p>` : "") +
    (omitted ? `<p class="note warn">${h(omittedText(s, omitted))}</p>` : "");
  if (!s.findings.length)
    return `<section class="step">${head}${error}<p class="none">${s.status === "passed" ? "No findings." : s.status === "skipped" ? "Not run." : "No findings reported."}</p></section>`;
  const rows = s.findings
    .map(
      (f) =>
        `<tr><td class="sev sev-${h(f.severity)}">${h(f.severity)}</td><td class="loc">${h(location(file, f))}</td><td class="code">${h(f.code)}</td><td class="msg">${h(f.message)}</td><td class="path">${h(f.path ?? "")}</td></tr>`,
    )
    .join("");
  return `<section class="step">${head}${error}<table><thead><tr><th>Severity</th><th>Location</th><th>Code</th><th>Message</th><th>Path</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

function run({ run: r, file, notValidated }: ReportItem): string {
  // A file that got no run has no version, file type, run, time or counts: "not validated".
  const meta: [string, string][] = [
    [
      "Workflow",
      notValidated
        ? h(r.workflow.slug)
        : // Version 0: `assay validate --local`, a definition file that has no server version.
          `${h(r.workflow.slug)} (${r.workflow.version > 0 ? `version ${r.workflow.version}` : "local definition"})`,
    ],
    [
      "Content type",
      r.submission.file_type
        ? `${h(r.submission.content_type)} (${h(r.submission.file_type)})`
        : h(r.submission.content_type),
    ],
    ["Run", r.url ? `<a href="${h(r.url)}">${h(r.id)}</a>` : h(r.id || "—")],
    ...(notValidated
      ? []
      : ([
          ["Submitted", h(r.created_at)],
          ["Duration", ms(r.duration_ms)],
        ] as [string, string][])),
  ];
  const s = r.summary;
  const counts = notValidated
    ? ["not validated"]
    : s
      ? [
          countsText(s),
          `${plural(s.steps_passed, "step")} passed`,
          `${s.steps_failed} failed`,
          `${s.steps_skipped} skipped`,
        ]
      : [`${plural(r.steps.length, "step")}`];
  const notes = [
    r.error ? `<p class="note">${h(r.error)}</p>` : "",
    s?.truncated
      ? `<p class="note warn">Findings were capped per step: not every problem is listed.</p>`
      : "",
  ].join("");
  return `<section class="run"><h2>${badge(r.status)}${h(file)}</h2><dl class="meta">${meta.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl><div class="counts">${counts.map((c) => `<span>${h(c)}</span>`).join("")}</div>${notes}${r.steps.map((x) => step(file, x)).join("")}</section>`;
}

export function renderHtml(items: ReportItem[], opts: { generatedAt?: string } = {}): string {
  const title =
    items.length === 1
      ? `Assay report: ${items[0]!.file} — ${items[0]!.run.status}`
      : `Assay report: ${plural(items.length, "file")}`;
  const generated = opts.generatedAt ?? new Date().toISOString();
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>${h(title)}</title>
<style>${HTML_STYLE}</style>
</head>
<body>
<header><h1>Assay validation report</h1><p class="sub">${h(title)}</p></header>
<main>
${items.map(run).join("\n")}
</main>
<footer>Generated ${h(generated)} by Assay ${h(VERSION)}.</footer>
</body>
</html>
`;
}
