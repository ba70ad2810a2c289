// Process warnings (process.emitWarning) collected while a test runs: a library that "warns the
// process" writes to the server's or the CLI's stderr, outside the log's format.
import { afterEach, beforeEach } from "bun:test";

/** The warnings' messages since the current test began (registers its own hooks). */
export function collectWarnings(): { readonly messages: string[]; settled(): Promise<void> } {
  const messages: string[] = [];
  const listen = (w: Error) => messages.push(w.message);
  beforeEach(() => {
    messages.length = 0;
    process.on("warning", listen);
  });
  afterEach(() => {
    process.off("warning", listen);
  });
  return {
    messages,
    // emitWarning delivers its event on a later turn.
    async settled() {
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 0));
    },
  };
}
