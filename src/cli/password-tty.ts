// `--password-stdin` on a terminal. Read to the end of input as from a pipe, the command sat there
// without a word (README: `assay init … --password-stdin`) until Ctrl-D, showing the password as
// it was typed. On a terminal it asks, reads one line without echo, and ends at Enter.
import { UsageError } from "./args.ts";

/** One line typed at the terminal, not echoed: its bytes, without the line end. */
export async function readPasswordTty(prompt: string): Promise<Buffer> {
  const stdin = process.stdin;
  // Echo off before the prompt shows: what is typed once it is there is never echoed.
  stdin.setRawMode(true);
  process.stderr.write(prompt);
  stdin.resume();
  const bytes: number[] = [];
  let onData: (chunk: Buffer) => void = () => {};
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      onData = (chunk) => {
        for (const b of chunk) {
          // Enter (CR in raw mode, LF from some terminals) or Ctrl-D: the line is complete.
          if (b === 0x0d || b === 0x0a || b === 0x04) return resolve(Buffer.from(bytes));
          // Raw mode turns Ctrl-C into a byte: the command is stopped as it would have been.
          if (b === 0x03) return reject(new UsageError("canceled at the password prompt"));
          if (b === 0x7f || b === 0x08) {
            // Backspace takes back one character, all of its UTF-8 bytes.
            while (bytes.length && ((bytes.pop() as number) & 0xc0) === 0x80) {}
            continue;
          }
          bytes.push(b);
        }
      };
      stdin.on("data", onData);
    });
  } finally {
    stdin.off("data", onData);
    stdin.setRawMode(false);
    stdin.pause();
    process.stderr.write("\n");
  }
}
