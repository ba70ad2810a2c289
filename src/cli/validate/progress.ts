// Progress for people watching a terminal: one line on stderr, rewritten in place. Silent when
// stderr is not a terminal (CI logs, pipes) and for a single file.
import { visible } from "../../reports/escape.ts";

export interface Progress {
  done(label: string): void;
  end(): void;
}

const SILENT: Progress = { done() {}, end() {} };

export function createProgress(
  total: number,
  stream: { isTTY?: boolean; columns?: number; write(s: string): unknown } = process.stderr,
): Progress {
  if (!stream.isTTY || total < 2) return SILENT;
  let n = 0;
  // A pseudo-terminal may report 0 columns.
  const width = () => Math.max(stream.columns || 80, 20) - 1;
  stream.write(`\r\x1b[2Kvalidating ${total} files…`);
  return {
    done(label) {
      n++;
      // The label is a file name: shown, not obeyed, like all printed text (reports/escape.ts).
      stream.write(`\r\x1b[2K${`[${n}/${total}] ${visible(label)}`.slice(0, width())}`);
    },
    end() {
      stream.write("\r\x1b[2K");
    },
  };
}
