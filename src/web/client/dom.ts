// A few lines instead of a framework: build elements from tag, attributes and children. Text is
// always set as text (never parsed as HTML), so data from the API cannot inject markup.

export type Child = Node | string | number | null | undefined | false | Child[];
export type Attrs = Record<string, unknown>;

// Set as properties after the children exist (a <select>'s value needs its options first).
const PROPS = new Set(["value", "checked", "selected", "indeterminate", "files"]);

export function append(parent: Node, children: Child[]): void {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else parent.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  const props: [string, unknown][] = [];
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v == null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v as EventListener);
    else if (PROPS.has(k)) props.push([k, v]);
    else if (k === "class") el.className = String(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  for (const [k, v] of props) (el as unknown as Record<string, unknown>)[k] = v;
  return el;
}

/** Replaces an element's children. */
export function mount(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

let ids = 0;
/** A unique id for label/aria wiring. */
export const uid = (prefix = "f") => `${prefix}-${++ids}`;

/** A labelled form control: label, control, optional hint; the control gets an id. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: Child,
): HTMLDivElement {
  control.id ||= uid();
  const hintEl = hint ? h("p", { class: "hint", id: `${control.id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, hintEl);
}

/** A checkbox with its label to the right. */
export function checkbox(label: string, attrs: Attrs): HTMLDivElement {
  const input = h("input", { type: "checkbox", id: uid(), ...attrs });
  return h("div", { class: "field check" }, input, h("label", { for: input.id }, label));
}

export function option(value: string, label: string, selected = false): HTMLOptionElement {
  return h("option", { value, selected }, label);
}
