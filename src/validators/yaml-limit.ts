// The largest YAML document a step parses. The `yaml` library holds the whole document's syntax
// tree and then its node tree: ~175 bytes of memory per byte of YAML, ~1 s per MB on this stack
// (measured 2026-11-29, docs/limits.md), so the 25 MB a submission may be would need ~4 GB in
// one validation worker. A setting (ASSAY_MAX_YAML_BYTES), read here from the environment: a
// worker's environment is given by the pool (src/deps.ts puts the server's value in it), and
// `assay validate --local` runs in the process whose environment the user set. Only workers parse
// YAML: the inline lane takes JSON alone (src/jobs/inline.ts).
import { limitFromEnv } from "./env-limit.ts";

export const MAX_YAML_BYTES_ENV = "ASSAY_MAX_YAML_BYTES";
export const DEFAULT_MAX_YAML_BYTES = 4 * 1024 * 1024;

const limit = limitFromEnv(MAX_YAML_BYTES_ENV, DEFAULT_MAX_YAML_BYTES);

/** Bytes of UTF-8 a YAML document may have; 0: no limit. */
export function maxYamlBytes(): number {
  return limit;
}
