// Bounds applied inside validators so hostile input yields a finding, never a crash or a hang.
// The worker pool's per-step timeout is the last line of defence; these keep us well inside it.

/** Deepest JSON/YAML nesting accepted: deeper input is a finding, not a stack overflow. */
export const MAX_JSON_DEPTH = 512;
/** YAML aliases expanded when building data (yaml's own billion-laughs guard). */
export const MAX_YAML_ALIAS_COUNT = 100;
/** CSV cells per record; more is a csv.too_many_columns finding and the check stops. */
export const MAX_CSV_COLUMNS = 10_000;
/** CSV records per file; more is a csv.too_many_rows finding and the check stops. */
export const MAX_CSV_ROWS = 1_000_000;
/**
 * XML: libxml2's defaults stay on (no XML_PARSE_HUGE): element depth 256, entity nesting 20,
 * entity amplification factor bounded (billion laughs is rejected in milliseconds). External
 * entities, external DTDs and network access are never loaded.
 */
export const MAX_XML_DEPTH = 256;
/**
 * Attributes of one element a Schematron step reads: its tree builder (slimdom) adds each
 * attribute in time linear in those already there, so 80,000 on one element took 30 s. libxml2
 * parses them in milliseconds; past this the step is one `xml.too_many_attributes` error.
 */
export const MAX_SCHEMATRON_ATTRIBUTES = 10_000;
/** Common step-config bounds (CONTRACT §2a: every step config may carry these). */
export const DEFAULT_MAX_FINDINGS = 1000;
export const MAX_MAX_FINDINGS = 10_000;
export const MAX_TIMEOUT_MS = 600_000;
/**
 * A finding's message, in characters; longer ones end in "…". A rule's message template is
 * bounded at save, but placeholders and schema texts are not, and every finding is stored,
 * answered and rendered into reports.
 */
export const MAX_FINDING_MESSAGE_CHARS = 2000;
/**
 * A save-time problem's message, in characters; longer ones end in "…". It may quote a JSON
 * Pointer into the config, as long as the config's deepest path of keys: 50 of them answered
 * 34 MB to a 1 MB draft (docs/security.md).
 */
export const MAX_CONFIG_ISSUE_CHARS = 2000;
/**
 * Characters of one step's findings (message, path and rule); past it the step is truncated as
 * at `max_findings`. 10,000 findings of 400 characters fit: what a step stores is bounded by
 * bytes, not only by a count that messages of any length multiply.
 */
export const MAX_STEP_FINDING_CHARS = 4 * 1024 * 1024;
/** Assertions: rules per step, expression length, CEL parse limits. */
export const MAX_ASSERTION_RULES = 200;
export const MAX_EXPRESSION_LENGTH = 4096;
/** CEL source: nodes of the parsed expression, nesting, elements of one literal, call arguments. */
export const CEL_LIMITS = {
  maxAstNodes: 2000,
  maxDepth: 64,
  maxListElements: 1000,
  maxMapEntries: 1000,
  maxCallArguments: 32,
};
/**
 * CEL evaluation budget, per rule and per evaluation (one document, or one row): cost units
 * charged as it runs (src/validators/assertions/meter.ts). A unit is one step of a comprehension's
 * body per AST node, one list element or map entry built or traversed, four characters of a
 * string built. 10 M units is a few seconds of work at most and bounds what one evaluation can
 * allocate to roughly 100 MB; a linear rule over a million CSV rows fits.
 */
export const CEL_COST_LIMIT = 10_000_000;
/** Longest string or bytes value a CEL function may build (characters or bytes). */
export const CEL_MAX_STRING = 8 * 1024 * 1024;
/** Regexes written by workflow authors (text_rules, csv_table pattern). */
export const MAX_REGEX_LENGTH = 1000;
/**
 * Most positions one pattern may expand to before it is compiled (src/validators/shared/
 * regex-cost.ts): Schematron's matches(), tokenize() and replace() and CEL's matches(), a literal
 * at save and every pattern at run time, computed ones included. Measured (2026-11-30): 20,000
 * cost xspattern ~30 ms and ~8 MB, RE2 about as much; `((a{100}){100}){100}` (a million) 0.8 s
 * and 212 MB, and a billion took the server to 6.4 GB in 20 s.
 */
export const MAX_REGEX_COST = 20_000;
/** Save-time issues reported for one config before giving up (a broken schema can yield hundreds). */
export const MAX_CONFIG_ISSUES = 50;
