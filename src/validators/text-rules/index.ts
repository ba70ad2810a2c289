// `text_rules`: size, line and encoding limits and author regexes over the raw text of any file.
// Lengths count Unicode code points; columns are UTF-16 units like everywhere else.
import { MAX_FINDING_MESSAGE_CHARS, MAX_REGEX_LENGTH } from "../limits.ts";
import { counted } from "../shared/bound-words.ts";
import { ALL_FILE_TYPES, COMMON_CONFIG_PROPERTIES, SEVERITY_SCHEMA } from "../shared/common.ts";
import { issue, isPlainObject, shapeIssues } from "../shared/config-shape.ts";
import { FindingCollector, finding } from "../shared/findings.ts";
import { LineIndex } from "../shared/position.ts";
import { compileUserRegex } from "../shared/user-regex.ts";
import { charCount } from "../../lib/text.ts";
import { storedPosition } from "../shared/stored-position.ts";
import { firstInvalidUtf8, hasUtf8Bom } from "../shared/utf8.ts";
import type { ConfigIssue, Severity, ValidationContext, ValidationInput, ValidatorDef } from "../types.ts";

const ENCODINGS = ["utf-8", "utf-8-bom", "utf-8-no-bom", "ascii"] as const;

const configSchema = {
  type: "object",
  properties: {
    max_bytes: { type: "integer", minimum: 0 },
    max_lines: { type: "integer", minimum: 0 },
    max_line_length: {
      type: "integer",
      minimum: 1,
      description: "In characters (code points), line break excluded.",
    },
    encoding: {
      enum: [...ENCODINGS],
      description:
        "utf-8: valid UTF-8, BOM optional; utf-8-bom: BOM required; utf-8-no-bom: BOM forbidden; ascii: 7-bit only.",
    },
    patterns: {
      type: "array",
      maxItems: 100,
      items: {
        type: "object",
        required: ["regex", "must", "message"],
        properties: {
          regex: { type: "string", minLength: 1, maxLength: MAX_REGEX_LENGTH },
          flags: {
            type: "string",
            pattern: "^(?!.*(.).*\\1)[ims]*$",
            description:
              "Any of i, m, s (u is always on). Patterns use ECMA-262 syntax and run in linear time: backreferences and most lookaheads are refused (docs/validators.md).",
          },
          must: { enum: ["match", "not_match"] },
          message: { type: "string", minLength: 1, maxLength: MAX_FINDING_MESSAGE_CHARS },
          severity: SEVERITY_SCHEMA,
        },
        additionalProperties: false,
      },
    },
    ...COMMON_CONFIG_PROPERTIES,
  },
  additionalProperties: false,
};

interface PatternRule {
  regex: string;
  flags?: string;
  must: "match" | "not_match";
  message: string;
  severity?: Severity;
}

interface TextRulesConfig {
  max_bytes?: number;
  max_lines?: number;
  max_line_length?: number;
  encoding?: (typeof ENCODINGS)[number];
  patterns?: PatternRule[];
}

function checkConfig(config: unknown): ConfigIssue[] {
  if (!isPlainObject(config)) return [issue("", "invalid", "must be an object")];
  const shape = shapeIssues(configSchema, config);
  if (shape.length > 0) return shape;
  const issues: ConfigIssue[] = [];
  ((config as TextRulesConfig).patterns ?? []).forEach((p, i) => {
    const r = compileUserRegex(p.regex, p.flags);
    if (!r.ok) issues.push(issue(`patterns[${i}].regex`, r.code, r.message));
  });
  return issues;
}

function checkEncoding(
  input: ValidationInput,
  enc: NonNullable<TextRulesConfig["encoding"]>,
  out: FindingCollector,
) {
  // The file as it came, not the UTF-8 copy a declared charset gets (types.ts): a Latin-1
  // document is not UTF-8 because the worker re-encoded it.
  const bytes = input.stored ?? input.bytes;
  const bad = enc === "ascii" ? bytes.findIndex((b) => b >= 0x80) : firstInvalidUtf8(bytes);
  if (bad >= 0) {
    const what = enc === "ascii" ? "a non-ASCII byte" : "an invalid UTF-8 byte";
    const hex = bytes[bad].toString(16).padStart(2, "0");
    out.add(finding("text.encoding", `${what} (0x${hex}) at byte offset ${bad}`, storedPosition(input, bad)));
  } else if (enc === "utf-8-bom" && !hasUtf8Bom(bytes)) {
    out.add(
      finding("text.encoding", "must start with a UTF-8 byte order mark (EF BB BF)", { line: 1, column: 1 }),
    );
  } else if (enc === "utf-8-no-bom" && hasUtf8Bom(bytes)) {
    out.add(finding("text.encoding", "must not start with a UTF-8 byte order mark", { line: 1, column: 1 }));
  }
}

/** Splits on \r\n, \n or \r; a final line break does not start another line. */
function physicalLines(text: string): string[] {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return text === "" ? [] : lines;
}

/** UTF-16 offset of the code point at index `n`, or -1 when the string is shorter. */
function codePointOffset(s: string, n: number): number {
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    if (count === n) return i;
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) i++;
    count++;
  }
  return -1;
}

function compile(config: unknown) {
  const cfg = config as TextRulesConfig;
  const patterns = (cfg.patterns ?? []).map((p, i) => {
    const r = compileUserRegex(p.regex, p.flags);
    if (!r.ok) throw new Error(`text_rules config not checked: patterns[${i}]: ${r.message}`);
    return { ...p, re: r.regex };
  });
  return (input: ValidationInput, ctx: ValidationContext) => {
    const out = new FindingCollector(ctx.maxFindings);
    const { text } = input;
    // Sizes are the file's, as stored (types.ts).
    const bytes = input.stored ?? input.bytes;
    if (cfg.encoding) checkEncoding(input, cfg.encoding, out);
    if (cfg.max_bytes !== undefined && bytes.length > cfg.max_bytes) {
      const where = storedPosition(input, Math.min(cfg.max_bytes, bytes.length));
      out.add(
        finding(
          "text.max_bytes",
          `${counted(bytes.length, "byte")}, more than the ${cfg.max_bytes} allowed`,
          where,
        ),
      );
    }
    const lines = physicalLines(text);
    if (cfg.max_lines !== undefined && lines.length > cfg.max_lines) {
      const line = cfg.max_lines + 1;
      out.add(
        finding(
          "text.max_lines",
          `${counted(lines.length, "line")}, more than the ${cfg.max_lines} allowed`,
          {
            line,
            column: 1,
          },
        ),
      );
    }
    const maxLen = cfg.max_line_length;
    if (maxLen !== undefined) {
      for (let i = 0; i < lines.length && !out.truncated; i++) {
        const line = lines[i];
        if (line.length <= maxLen) continue; // UTF-16 length bounds the code point count
        const over = codePointOffset(line, maxLen);
        if (over < 0) continue;
        const msg = `line is ${charCount(line)} characters long, more than ${maxLen}`;
        out.add(finding("text.line_too_long", msg, { line: i + 1, column: over + 1 }));
      }
    }
    const index = new LineIndex(text);
    for (const p of patterns) {
      if (out.truncated) break;
      const severity = p.severity ?? "error";
      if (p.must === "match") {
        if (!p.re.test(text))
          out.add(finding("text.pattern_missing", p.message, { severity, rule: p.regex }));
        continue;
      }
      for (const at of p.re.matchStarts(text, ctx.maxFindings + 1)) {
        if (
          !out.add(
            finding("text.pattern_forbidden", p.message, { severity, rule: p.regex, ...index.position(at) }),
          )
        )
          break;
      }
    }
    return out.result();
  };
}

export const textRulesValidator: ValidatorDef = {
  slug: "text_rules",
  name: "Text rules",
  description: "Size, line count, line length, encoding and regular-expression rules on the raw text.",
  supportedFileTypes: ALL_FILE_TYPES,
  configSchema,
  checkConfig,
  compile,
};
