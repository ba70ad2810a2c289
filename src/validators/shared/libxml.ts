// libxml2-wasm, imported on demand. Importing it instantiates its wasm at once: ~34 MiB of wasm
// memory that JSC counts as extra heap memory, which also raises its garbage collection
// thresholds. A server whose workflows never touch XML should not carry that, so no module
// imports a value from "libxml2-wasm": code that may run XML awaits loadLibxml() first
// (src/validators/loader.ts for workers, prepareChecks in src/validators/registry.ts for
// save-time checks, which for xml_schema steps run on the workflow check thread), then takes what
// it needs from libxml() at call time.
import { boundErrorPaths } from "./libxml-errors.ts";

type Libxml = typeof import("libxml2-wasm");

let lib: Libxml | undefined;
let loading: Promise<Libxml> | undefined;

/** What a load may read while serveWhile() runs (an XSD set's documents); null otherwise. */
let serving: ((name: string) => Uint8Array | undefined) | null = null;
/** Handles of loads refused: their first read fails, so libxml2 reports it could not load them. */
const refused = new Set<number>();
const NOTHING = new Uint8Array(0);

/**
 * Every load libxml2 attempts (xs:include, RelaxNG externalRef, a DTD's external entity, in any
 * document of any validator) comes here, and only what serveWhile() serves is read. Answering
 * "not mine" instead would send libxml2 on to its built-in file loader, which reads the wasm
 * file system: Emscripten's /dev/stdin is the server's standard input (a save hung on it).
 */
function refuseUnserved(m: Libxml): void {
  const { openBuffer, readBuffer, closeBuffer } = m;
  m.xmlRegisterInputProvider({
    match: () => true,
    open: (name) => {
      const bytes = serving?.(name);
      if (bytes) return openBuffer(bytes);
      const fd = openBuffer(NOTHING);
      refused.add(fd);
      return fd;
    },
    read: (fd, buf) => (refused.has(fd as number) ? -1 : readBuffer(fd as number, buf)),
    close: (fd) => {
      refused.delete(fd as number);
      closeBuffer(fd as number);
      return true;
    },
  });
}

/** Runs `fn` (a compile) with `lookup` answering libxml2's loads; everything else stays refused. */
export function serveWhile<T>(lookup: (name: string) => Uint8Array | undefined, fn: () => T): T {
  serving = lookup;
  try {
    return fn();
  } finally {
    serving = null;
  }
}

/** Imports libxml2-wasm once; every later call gets the same module. */
export function loadLibxml(): Promise<Libxml> {
  loading ??= Promise.all([import("libxml2-wasm"), import("libxml2-wasm/lib/libxml2.mjs")]).then(
    ([m, internals]) => {
      refuseUnserved(m);
      boundErrorPaths(internals);
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
