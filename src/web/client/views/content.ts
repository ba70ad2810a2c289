// The submitted content with line numbers; lines that have findings are highlighted and the
// findings are written under them (symbol and words, not colour alone).
import { hasHiddenControls, showHiddenControls } from "../../../lib/text.ts";
import { h } from "../dom.ts";
import type { Finding, RunStep } from "../types.ts";
import { notice } from "../ui.ts";

export const MAX_LINES = 5000;
const RANK = { error: 3, warning: 2, info: 1 } as const;
const ICON = { error: "✖", warning: "⚠", info: "ℹ" } as const;

/** Findings by line number, with the step that reported them. */
export function findingsByLine(steps: RunStep[]): Map<number, (Finding & { step: string })[]> {
  const m = new Map<number, (Finding & { step: string })[]>();
  for (const s of steps)
    for (const f of s.findings ?? [])
      if (f.line != null) {
        const list = m.get(f.line) ?? [];
        list.push({ ...f, step: s.name });
        m.set(f.line, list);
      }
  return m;
}

export const lineId = (n: number) => `L${n}`;

/** Moves focus to a line of the viewer (from a finding's location link). */
export function goToLine(n: number): void {
  const el = document.getElementById(lineId(n));
  if (!el) return;
  el.scrollIntoView({ block: "center" });
  el.focus({ preventScroll: true });
  history.replaceState(null, "", `#${lineId(n)}`);
}

/** A line's children: number, mark, text; with its worst severity when findings are on it. */
function lineParts(n: number, line: string, worst: Finding["severity"] | null): HTMLElement[] {
  const text = h("code", null, showHiddenControls(line) || " ");
  if (!worst)
    return [
      h("span", { class: "ln", "aria-hidden": "true" }, String(n)),
      h("span", { class: "mark", "aria-hidden": "true" }),
      text,
    ];
  return [
    h(
      "span",
      { class: "ln" },
      h("span", { class: "sr-only" }, `Line `),
      String(n),
      h("span", { class: "sr-only" }, `, ${worst}:`),
    ),
    h("span", { class: "mark", "aria-hidden": "true" }, ICON[worst]),
    text,
  ];
}

const worstOf = (fs: Finding[]) =>
  fs.reduce((a, f) => (RANK[f.severity] > RANK[a] ? f.severity : a), "info" as Finding["severity"]);

function annotations(fs: (Finding & { step: string })[]): HTMLUListElement {
  return h(
    "ul",
    { class: "annots" },
    fs.map((f) =>
      h(
        "li",
        { class: `annot sev-${f.severity}` },
        h("span", { class: "sev" }, h("span", { "aria-hidden": "true" }, `${ICON[f.severity]} `), f.severity),
        " ",
        h("code", null, f.code),
        " ",
        showHiddenControls(f.message),
        f.column != null ? h("span", { class: "muted" }, ` (column ${f.column})`) : null,
      ),
    ),
  );
}

export interface ContentView {
  el: HTMLElement;
  /**
   * Marks a step's further findings (a page loaded by "Show more"): only the lines they are on
   * change, in place, so the cost is that of the page, not of the whole content (5,000 lines).
   */
  addFindings(step: string, findings: Finding[]): void;
}

export function contentViewer(text: string, steps: RunStep[]): ContentView {
  const lines = text.split(/\r\n|\n|\r/);
  const byLine = findingsByLine(steps);
  // The empty "line" after a final newline is left out, unless a finding is on it: a truncated
  // document is refused at the end of its input, there ("line 2, column 1" for `{"id": 1,⏎`).
  if (lines.length > 1 && lines[lines.length - 1] === "" && !byLine.has(lines.length)) lines.pop();
  const shown = lines.slice(0, MAX_LINES);
  const rows = shown.map((line, i) => {
    const n = i + 1;
    const fs = byLine.get(n);
    const worst = fs ? worstOf(fs) : null;
    const row = h(
      "div",
      { class: worst ? `ln-row hl sev-${worst}` : "ln-row", id: lineId(n), tabindex: "-1" },
      lineParts(n, line, worst),
    );
    return fs ? [row, annotations(fs)] : row;
  });
  const viewer = h(
    "div",
    { class: "viewer", role: "region", "aria-label": "Submitted content", tabindex: "0" },
    rows,
  );
  const el = h(
    "div",
    null,
    // As a code review tool warns ("Trojan Source"): such text may read otherwise than it parses.
    hasHiddenControls(text)
      ? notice(
          "warning",
          "This content holds bidirectional Unicode controls or line separators: it may read differently from what a parser sees. They are shown as \\uNNNN below.",
        )
      : null,
    lines.length > MAX_LINES
      ? h(
          "p",
          { class: "hint" },
          `Showing the first ${MAX_LINES.toLocaleString()} of ${lines.length.toLocaleString()} lines.`,
        )
      : null,
    viewer,
  );
  const addFindings = (step: string, findings: Finding[]) => {
    const changed = new Set<number>();
    for (const f of findings)
      if (f.line != null && f.line <= shown.length) {
        const list = byLine.get(f.line) ?? [];
        list.push({ ...f, step });
        byLine.set(f.line, list);
        changed.add(f.line);
      }
    for (const n of changed) {
      const row = viewer.querySelector<HTMLElement>(`#${lineId(n)}`);
      if (!row) continue;
      const fs = byLine.get(n)!;
      const worst = worstOf(fs);
      // The row itself stays (focus on it, from a location link, stays too); its parts are redrawn.
      row.className = `ln-row hl sev-${worst}`;
      row.replaceChildren(...lineParts(n, shown[n - 1], worst));
      const next = row.nextElementSibling;
      if (next?.classList.contains("annots")) next.replaceWith(annotations(fs));
      else row.after(annotations(fs));
    }
  };
  return { el, addFindings };
}
