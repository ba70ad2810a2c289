// Offsets → 1-based line and column. Columns count UTF-16 code units of the decoded text, the
// LSP and SARIF default, so editors land on the right character. Line breaks are \n, \r\n and a
// lone \r (XML and YAML normalise all three).

export interface Position {
  line: number;
  column: number;
}

/**
 * Built on first use: a valid 10 MiB document asks for no position, and scanning it for line
 * starts cost ~25 ms (docs/benchmarks.md, measure 3).
 */
export class LineIndex {
  #starts: number[] | null = null;

  constructor(readonly text: string) {}

  private get starts(): number[] {
    if (this.#starts) return this.#starts;
    const text = this.text;
    const starts = [0];
    // indexOf runs natively: far quicker than a charCodeAt loop on long lines.
    let cr = text.indexOf("\r");
    let lf = text.indexOf("\n");
    while (cr >= 0 || lf >= 0) {
      if (lf >= 0 && (cr < 0 || lf < cr)) {
        starts.push(lf + 1);
        lf = text.indexOf("\n", lf + 1);
      } else {
        // \r\n is one break (the \n records it); a lone \r is a break of its own.
        if (lf !== cr + 1) starts.push(cr + 1);
        cr = text.indexOf("\r", cr + 1);
      }
    }
    this.#starts = starts;
    return starts;
  }

  get lineCount(): number {
    return this.starts.length;
  }

  /** Offset of the first character of a 1-based line. */
  lineStart(line: number): number {
    const starts = this.starts;
    return starts[Math.min(Math.max(line, 1), starts.length) - 1];
  }

  position(offset: number): Position {
    const starts = this.starts;
    const o = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= o) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: o - starts[lo] + 1 };
  }
}
