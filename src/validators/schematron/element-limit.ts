// The most elements a Schematron step reads. Its document model (slimdom, with source positions
// and the name index) holds ~3.3 KB of memory per element (measured 2026-11-29: 300,000 elements
// took 1 GB and 11 s; a 9 MB document of 10^6 elements passed 4 GB), so the 25 MB a submission may
// be could need ~10 GB in one worker, and the server's memory limit would stop the step that has
// run longest, which may be another org's. As ASSAY_MAX_YAML_BYTES (src/validators/yaml-limit.ts):
// a setting the pool puts in each worker's environment (src/deps.ts).
import { limitFromEnv } from "../env-limit.ts";

import { prologEnd } from "../shared/xml-prolog.ts";

export const MAX_SCHEMATRON_ELEMENTS_ENV = "ASSAY_MAX_SCHEMATRON_ELEMENTS";
export const DEFAULT_MAX_SCHEMATRON_ELEMENTS = 200_000;

const limit = limitFromEnv(MAX_SCHEMATRON_ELEMENTS_ENV, DEFAULT_MAX_SCHEMATRON_ELEMENTS);

/** Elements a Schematron step reads; 0: no limit. */
export function maxSchematronElements(): number {
  return limit;
}

/**
 * Whether the text holds more than `max` start tags: a `<` followed by a name (not `</`, `<!`,
 * `<?`). A `<` inside a comment or CDATA section that looks like a tag counts too: the bound is
 * on what the text could hold, found in one scan that stops at the bound. The prolog (XML
 * declaration, comments, DOCTYPE) is skipped: its entity declarations' markup is no element until
 * a reference expands it, and the expanded text holds each such element where it is used.
 */
export function moreStartTagsThan(text: string, max: number): boolean {
  let n = 0;
  for (let at = text.indexOf("<", prologEnd(text)); at !== -1; at = text.indexOf("<", at + 1)) {
    const c = text.charCodeAt(at + 1);
    // `/` 47, `!` 33, `?` 63: end tags, comments, CDATA, declarations, processing instructions.
    if (c === 47 || c === 33 || c === 63 || Number.isNaN(c)) continue;
    if (++n > max) return true;
  }
  return false;
}
