// libxml2-wasm, imported on demand. Importing it instantiates its wasm at once: ~34 MiB of wasm
// memory that JSC counts as extra heap memory, which also raises its garbage collection
// thresholds. A server whose workflows never touch XML should not carry that, so no module
// imports a value from "libxml2-wasm": code that may run XML awaits loadLibxml() first
// (src/validators/loader.ts for workers, prepareChecks in src/validators/registry.ts for
// save-time checks), then takes what it needs from libxml() at call time.
type Libxml = typeof import("libxml2-wasm");

let lib: Libxml | undefined;
let loading: Promise<Libxml> | undefined;

/** Imports libxml2-wasm once; every later call gets the same module. */
export function loadLibxml(): Promise<Libxml> {
  loading ??= import("libxml2-wasm").then(
    (m) => {
      lib = m;
      return m;
    },
    (e) => {
      loading = undefined; // let a later call try again
      throw e;
    },
  );
  return loading;
}

/** The loaded library; throws when no caller awaited loadLibxml() (a bug, never a user error). */
export function libxml(): Libxml {
  if (!lib) throw new Error("libxml2 is not loaded: await loadLibxml() first");
  return lib;
}

/** Whether libxml2's wasm is in this thread (tests prove it stays out until needed). */
export function libxmlLoaded(): boolean {
  return lib !== undefined;
}
