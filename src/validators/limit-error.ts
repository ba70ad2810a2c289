// A validator that cannot finish within one of its engine's limits throws StepLimitError: the
// step then ends `error` with the error's finding (src/jobs/worker-loop.ts), so a limit can never
// read as "no problem found" and pass the data.
import type { Finding } from "./types.ts";

export class StepLimitError extends Error {
  constructor(readonly finding: Finding) {
    super(finding.message);
    this.name = "StepLimitError";
  }
}
