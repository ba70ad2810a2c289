// Runs held open by the test, not by a slow fixture: a `test_hold` step
// (src/validators/test-hold/index.ts) blocks until the test opens its gate. A test server
// (server.ts) has a gates dir; a binary started with ASSAY_TEST_GATES_DIR uses the same files.
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { testTempDir } from "./temp.ts";

/** A JSON workflow ("hold") whose one step holds each run until its gate is opened. */
export const HOLD_WORKFLOW = {
  slug: "hold",
  allowed_file_types: ["JSON"],
  steps: [{ name: "hold", validator: "test_hold", config: {} }],
};

/**
 * A JSON workflow ("fast") whose runs end at once but are a worker's job: a json_schema-only run
 * would end in the inline lane without a worker (test/inline-runs.test.ts). Beside HOLD_WORKFLOW
 * in tests about runs waiting for a worker.
 */
export const WORKER_WORKFLOW = {
  slug: "fast",
  allowed_file_types: ["JSON"],
  steps: [{ name: "syntax", validator: "syntax", config: {} }],
};

export interface Gate {
  name: string;
  /** A submission held by this gate; `padBytes` makes it larger (to cross a size threshold). */
  doc(padBytes?: number): string;
  /** Resolves once `count` steps have entered this gate (bounded: throws after `ms`). */
  held(count?: number, ms?: number): Promise<void>;
  /** Steps that have entered this gate so far. */
  entered(): number;
  /** Lets every step held by this gate, and any later one, go on: pass, or fail with a finding. */
  open(result?: "pass" | "fail"): void;
}

export interface Gates {
  dir: string;
  /** A new gate with a name unique in this dir. */
  gate(label?: string): Gate;
  /** Opens every gate a step has entered (before a server stops: nothing stays held). */
  openAll(): void;
  /** Opens all and removes the dir. */
  remove(): void;
}

export function createGates(dir = testTempDir("assay-gates-")): Gates {
  let n = 0;
  const open = (name: string, result: "pass" | "fail" = "pass") =>
    writeFileSync(join(dir, `${name}.open`), result);
  const entered = (name: string) => {
    const file = join(dir, `${name}.held`);
    return existsSync(file) ? readFileSync(file, "utf8").split("\n").length - 1 : 0;
  };
  const openAll = () => {
    if (!existsSync(dir)) return;
    for (const f of readdirSync(dir))
      if (f.endsWith(".held") && !existsSync(join(dir, f.replace(/\.held$/, ".open"))))
        open(f.slice(0, -".held".length));
  };
  return {
    dir,
    gate(label = "g") {
      const name = `${label}-${++n}`;
      return {
        name,
        doc: (padBytes = 0) => JSON.stringify({ gate: name, pad: "x".repeat(padBytes) }),
        entered: () => entered(name),
        async held(count = 1, ms = 30_000) {
          const deadline = Date.now() + ms;
          while (entered(name) < count) {
            if (Date.now() > deadline) throw new Error(`gate ${name}: ${entered(name)} of ${count} held`);
            await Bun.sleep(5);
          }
        },
        open: (result) => open(name, result),
      };
    },
    openAll,
    remove() {
      openAll();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
