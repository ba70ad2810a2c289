// Entry point of a production validation worker. The pool starts it from a URL built in
// src/main.ts (`new URL("./jobs/worker.ts", import.meta.url)`): in the compiled binary a relative
// path only resolves from the project root. It is also a build entrypoint (scripts/build.ts).
// Validators are imported on first use (src/validators/loader.ts), not all at start.
// A test server's workers also know `test_hold` (src/validators/test-hold/index.ts): the pool
// gives them ASSAY_TEST_GATES_DIR only when the server's config has it (src/deps.ts).
import { loadValidator } from "../validators/loader.ts";
import { TEST_GATES_ENV } from "../config.ts";
import { TEST_HOLD, createTestHold } from "../validators/test-hold/index.ts";
import { startWorkerLoop } from "./worker-loop.ts";

const gates = process.env[TEST_GATES_ENV];
const hold = gates ? createTestHold(gates) : null;
startWorkerLoop(hold ? (slug) => (slug === TEST_HOLD ? hold : loadValidator(slug)) : loadValidator);
