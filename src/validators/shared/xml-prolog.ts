// The prolog of an XML text — declaration, comments, PIs and the DOCTYPE before the root element —
// read from the text itself: where the root starts, and the names a DOCTYPE gives.

/** Where the root element starts: after the XML declaration, comments, PIs and the DOCTYPE. */
export function prologEnd(text: string): number {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (text.startsWith("<?", i)) i = after(text, "?>", i);
    else if (text.startsWith("<!--", i)) i = after(text, "-->", i);
    else if (text.startsWith("<!DOCTYPE", i)) i = doctypeEnd(text, i);
    else return i;
  }
}

/** The end of a DOCTYPE, past its internal subset (literals, comments and PIs skipped). */
function doctypeEnd(text: string, start: number): number {
  let inSubset = false;
  for (let i = start + 2; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") i = text.indexOf(c, i + 1);
    else if (inSubset && text.startsWith("<!--", i)) i = after(text, "-->", i) - 1;
    else if (inSubset && text.startsWith("<?", i)) i = after(text, "?>", i) - 1;
    else if (c === "[") inSubset = true;
    else if (c === "]") inSubset = false;
    else if (c === ">" && !inSubset) return i + 1;
    if (i < 0) break;
  }
  return text.length;
}

function after(text: string, close: string, from: number): number {
  const at = text.indexOf(close, from + 2);
  return at < 0 ? text.length : at + close.length;
}

export function withoutCommentsAndPIs(s: string): string {
  return s.replace(/<!--[\s\S]*?-->|<\?[\s\S]*?\?>/g, "");
}

/**
 * The DOCTYPE's name and the root element's name as written, or null without a DOCTYPE: XML 1.0's
 * VC: Root Element Type says they are equal. `rootAt` is the root's start tag offset.
 */
export function declaredRoot(text: string): { declared: string; root: string; rootAt: number } | null {
  const end = prologEnd(text);
  const m = /<!DOCTYPE\s+([^\s[>]+)/.exec(withoutCommentsAndPIs(text.slice(0, end)));
  const root = /^<([^\s/>]+)/.exec(text.slice(end, end + 1024));
  return m && root ? { declared: m[1]!, root: root[1]!, rootAt: end } : null;
}
