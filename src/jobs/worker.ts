// Entry point of a production validation worker. The pool starts it from a URL built in
// src/main.ts (`new URL("./jobs/worker.ts", import.meta.url)`): in the compiled binary a relative
// path only resolves from the project root. It is also a build entrypoint (scripts/build.ts).
// Validators are imported on first use (src/validators/loader.ts), not all at start.
import { loadValidator } from "../validators/loader.ts";
import { startWorkerLoop } from "./worker-loop.ts";

startWorkerLoop(loadValidator);
