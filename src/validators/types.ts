// The contract between the server and every validator. A validator is pure: bytes + config in,
// findings out. It runs inside a worker (src/jobs/worker.ts) and never touches the database.

export const FILE_TYPES = ["JSON", "XML", "YAML", "CSV", "TEXT"] as const;
export type FileType = (typeof FILE_TYPES)[number];

export type Severity = "error" | "warning" | "info";

/** One problem found in the data (CONTRACT §2, Finding). */
export interface Finding {
  severity: Severity;
  /** Stable, namespaced: json_schema.required, xml.not_well_formed, csv.type_error … */
  code: string;
  message: string;
  /** JSON Pointer for JSON/YAML, XPath for XML, "row N / field F" style for CSV; null if none. */
  path: string | null;
  /** 1-based line and column in the submitted text; null when unknown. */
  line: number | null;
  column: number | null;
  /** The rule that produced it (schema location, assertion id, pattern …); null if none. */
  rule: string | null;
}

/** A problem in a step's config, reported at save time as an errors[] item. */
export interface ConfigIssue {
  /** Dotted path inside the step config, e.g. "schema", "rules[2].expr". */
  field: string;
  code: string;
  message: string;
}

export interface ValidationInput {
  /**
   * The bytes engines that read bytes get (libxml2): the stored submission (after base64
   * decoding), or, under a charset other than UTF-8, the text re-encoded as UTF-8.
   */
  bytes: Uint8Array;
  /**
   * The submission's bytes exactly as stored, when they differ from `bytes` (a charset other than
   * UTF-8). Rules about the file itself (text_rules' size and encoding) read these.
   */
  stored?: Uint8Array;
  /** The charset `stored` is in (normalised, e.g. `iso-8859-1`), given with `stored`. */
  charset?: string;
  /** The bytes decoded with the submission's charset (default utf-8). */
  text: string;
  fileType: FileType;
  filename: string | null;
}

export interface ValidationContext {
  /** Stop collecting after this many findings and report truncated. */
  maxFindings: number;
}

export interface ValidationResult {
  findings: Finding[];
  truncated: boolean;
  /**
   * Set when the validator had to stop before judging all the data (e.g. a CEL rule over its
   * budget): the step ends `error` with this text, and its findings (the last says why) are kept.
   */
  error?: string;
}

/**
 * A step config compiled once (schema compiled, expressions parsed) and reused per run. `retains`:
 * XPath expressions this compile leaves for good in its thread (fontoxpath caches every expression
 * it compiled, ~10 KB each, with no eviction): the pool replaces a worker past a bound of them
 * (src/jobs/pool.ts, WORKER_MAX_RETAINED). It may grow as the validator runs (Schematron's
 * rewritten expressions, made when first evaluated): the worker reads it again after each run.
 */
export type CompiledValidator = ((input: ValidationInput, ctx: ValidationContext) => ValidationResult) & {
  retains?: number;
};

export interface ValidatorDef {
  slug: string;
  name: string;
  description: string;
  supportedFileTypes: readonly FileType[];
  /** JSON Schema (draft 2020-12) of the config object, published in GET /api/v1/validators/. */
  configSchema: Record<string, unknown>;
  /**
   * Save-time check: shape of the config AND its deep validity (JSON Schema meta-validated,
   * XSD compiled, CEL parsed and type-checked, regexes compiled). Empty array = valid.
   * The common keys max_findings and timeout_ms are checked by the registry, not here.
   */
  checkConfig(config: unknown): ConfigIssue[];
  /** Called only with a config that passed checkConfig. */
  compile(config: unknown): CompiledValidator;
}
