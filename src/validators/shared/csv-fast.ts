// A fast reader for the common CSV: one-character delimiter and quote, every line break "\n" (or
// every one "\r\n"). It reads a record and where its cells start in one pass over the text, with
// exactly csv-parse's values (as scanCsv configures it); for anything else, or at the first record
// that is not plain RFC 4180 (a stray or unclosed quote), scanCsv falls back to csv-parse, which
// then owns the error message. csv-parse alone took ~0.7 s per 10 MiB (docs/benchmarks.md).

export interface FastRecord {
  cells: string[];
  cellStarts: number[];
  /** Offset just past the last cell (before the line break). */
  end: number;
  /** Where the next record starts. */
  next: number;
}

/**
 * True when readRecord reads this text as csv-parse would. readRecord takes every "\r" for the
 * first half of "\r\n", so a lone "\r" goes to csv-parse (mixed "\n" and "\r\n" too, kept
 * simple: they are rare); so do lone surrogates (it would see U+FFFD) and multi-unit or
 * line-break delimiters and quotes.
 */
export function fastReadable(text: string, delimiter: string, quote: string): boolean {
  if (delimiter.length !== 1 || quote.length !== 1 || delimiter === quote) return false;
  if (/[\r\n]/.test(delimiter + quote) || !text.isWellFormed()) return false;
  const firstCr = text.indexOf("\r");
  if (firstCr < 0) return true;
  let crs = 0;
  for (let i = firstCr; i >= 0; i = text.indexOf("\r", i + 1)) {
    if (text.charCodeAt(i + 1) !== 10) return false;
    crs++;
  }
  let lfs = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lfs++;
  return crs === lfs;
}

/**
 * The record starting at `start` (< text.length), or null when it is not plain RFC 4180: an
 * unclosed quote, a character after a closing quote, a quote inside an unquoted cell.
 */
export function readRecord(text: string, start: number, delimiter: string, quote: string): FastRecord | null {
  const d = delimiter.charCodeAt(0);
  const q = quote.charCodeAt(0);
  const n = text.length;
  const cells: string[] = [];
  const cellStarts = [start];
  let i = start;
  let c = text.charCodeAt(i);
  for (;;) {
    if (c === q) {
      let close = text.indexOf(quote, i + 1);
      let doubled = false;
      for (;;) {
        if (close < 0) return null;
        if (text.charCodeAt(close + 1) !== q) break;
        doubled = true;
        close = text.indexOf(quote, close + 2);
      }
      const raw = text.slice(i + 1, close);
      cells.push(doubled ? raw.replaceAll(quote + quote, quote) : raw);
      i = close + 1;
      c = text.charCodeAt(i);
      if (i < n && c !== d && c !== 10 && c !== 13) return null;
    } else {
      const from = i;
      while (i < n && c !== d && c !== 10 && c !== 13) {
        if (c === q) return null;
        c = text.charCodeAt(++i);
      }
      cells.push(text.slice(from, i));
    }
    if (i >= n) return { cells, cellStarts, end: i, next: i };
    if (c !== d) return { cells, cellStarts, end: i, next: c === 13 ? i + 2 : i + 1 };
    cellStarts.push(++i);
    c = text.charCodeAt(i);
  }
}
