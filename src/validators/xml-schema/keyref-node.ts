// The element a keyref error is about. libxml2 reports "No match found for key-sequence … of
// keyref …" with the line of the element whose fields hold the sequence, but no node, so the
// finding had no path and no column. The element is found again: by its name at that line, and
// where several share the line (a document on one line), by the key values among its attributes'
// and children's text. One candidate left: its path; otherwise none, as before.
import type { XmlDocument, XmlElement } from "libxml2-wasm";
import { libxml } from "../shared/libxml.ts";
import { nodePath } from "../shared/libxml-errors.ts";

const KEYREF =
  /^Element '(?:\{[^}]*\})?([^']+)': No match found for key-sequence \[(.*)\] of keyref '[^']*'\.$/;

/** Per validation: the elements of a name, by line (found once per name). */
export class KeyrefLocator {
  readonly #byName = new Map<string, Map<number, XmlElement[]>>();

  constructor(private readonly doc: XmlDocument) {}

  /** libxml2's path of the element a keyref error names, or null when it is not one. */
  pathOf(message: string, line: number | null): string | null {
    const m = KEYREF.exec(message);
    if (!m || line === null) return null;
    const [, name, sequence] = m as unknown as [string, string, string];
    if (name.includes("'") || name.includes('"')) return null;
    let candidates = this.#elements(name).get(line) ?? [];
    if (candidates.length > 1) {
      const values = [...sequence.matchAll(/'((?:[^']|'')*)'/g)].map((v) => v[1]!);
      candidates = candidates.filter((e) => values.every((v) => holds(e, v)));
    }
    return candidates.length === 1 ? nodePath(candidates[0]!) : null;
  }

  #elements(name: string): Map<number, XmlElement[]> {
    let lines = this.#byName.get(name);
    if (lines) return lines;
    lines = new Map();
    for (const n of this.doc.find(`//*[local-name()='${name}']`)) {
      if (!(n instanceof libxml().XmlElement)) continue;
      lines.set(n.line, [...(lines.get(n.line) ?? []), n]);
    }
    this.#byName.set(name, lines);
    return lines;
  }
}

/** Whether a key value is the element's text, an attribute's value or a child element's text. */
function holds(e: XmlElement, value: string): boolean {
  if (e.attrs.some((a) => a.value.trim() === value)) return true;
  if (e.content.trim() === value) return true;
  for (let c = e.firstChild; c; c = c.next)
    if (c instanceof libxml().XmlElement && c.content.trim() === value) return true;
  return false;
}
