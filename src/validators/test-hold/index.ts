// `test_hold`: a step that blocks until the test that submitted the run releases it. Tests need
// runs that are still running (or still waiting for a worker) at a moment they choose; a fixture
// that is merely slow is slow on one machine and quick on another, so such tests passed or failed
// with the machine's load. This step holds for exactly as long as the test wants.
//
// It exists only in a server started with ASSAY_TEST_GATES_DIR (config `test_gates_dir`, never a
// `serve` flag): src/deps.ts adds it to that instance's save-time checks and src/jobs/worker.ts to
// its workers. The inline lane never runs it (src/jobs/inline.ts only knows json_schema).
//
// Protocol, all through files in the gates directory, so that it works alike for a server in the
// test's own process and for the built binary: the submission is a JSON object whose `gate` names
// the gate; on entering, the step appends a line to `<gate>.held` (one per step that entered:
// "held <pid> <ms>", so a test of several server processes can tell who ran it when); it then
// waits until `<gate>.open` exists, appends "<pid> <ms>" to `<gate>.done`, and passes, or fails
// with one finding when the open file says "fail". The wait is Atomics.wait in short slices: the worker stays interruptible, so the step
// time limit and cancel (both terminate the worker) stop it like any other step.
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import { COMMON_CONFIG_PROPERTIES } from "../shared/common.ts";
import { finding } from "../shared/findings.ts";
import type { ValidationInput, ValidationResult, ValidatorDef } from "../types.ts";

export const TEST_HOLD = "test_hold";
export const GATE_NAME = /^[A-Za-z0-9_-]{1,100}$/;
/** How often a held step looks for its release file (ms). */
const POLL_MS = 5;

const configSchema = {
  type: "object",
  properties: { ...COMMON_CONFIG_PROPERTIES },
  additionalProperties: false,
};

function gateOf(text: string): string | null {
  try {
    const v: unknown = JSON.parse(text);
    const gate = isPlainObject(v) ? v.gate : undefined;
    return typeof gate === "string" && GATE_NAME.test(gate) ? gate : null;
  } catch {
    return null;
  }
}

/** The test-only validator whose gates live in `dir`. */
export function createTestHold(dir: string): ValidatorDef {
  return {
    slug: TEST_HOLD,
    name: "Test hold",
    description: "Test servers only: holds the step until the test opens the gate the document names.",
    supportedFileTypes: ["JSON"],
    configSchema,
    checkConfig(config) {
      if (!isPlainObject(config)) return [{ field: "", code: "invalid", message: "must be an object" }];
      return shapeIssues(configSchema, config);
    },
    compile() {
      const slice = new Int32Array(new SharedArrayBuffer(4));
      return (input: ValidationInput): ValidationResult => {
        const gate = gateOf(input.text);
        if (!gate)
          return {
            findings: [
              finding(
                "test_hold.no_gate",
                `the document must be a JSON object with "gate" matching ${GATE_NAME}`,
              ),
            ],
            truncated: false,
          };
        appendFileSync(join(dir, `${gate}.held`), `held ${process.pid} ${Date.now()}\n`);
        const open = join(dir, `${gate}.open`);
        while (!existsSync(open)) Atomics.wait(slice, 0, 0, POLL_MS);
        const failed = readFileSync(open, "utf8").trim() === "fail";
        appendFileSync(join(dir, `${gate}.done`), `${process.pid} ${Date.now()}\n`);
        return {
          findings: failed ? [finding("test_hold.failed", `gate ${gate} was opened with "fail"`)] : [],
          truncated: false,
        };
      };
    },
  };
}
