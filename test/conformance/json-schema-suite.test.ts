// The official JSON-Schema-Test-Suite through our json_schema validator, end to end: save-time
// check, compile, run on the JSON text, "valid" means no error-level finding. Remote refs are
// served from the suite's remotes/ folder via the `resources` hook (no network).
//
// Per draft, two tallies:
//  - required: tests/<draft>/*.json, with `format` as the draft's default (asserted up to draft 7,
//    annotation-only from 2019-09: assert_formats false there, as the suite expects);
//  - optional: tests/<draft>/optional/**, with assert_formats true (Assay's default).
// The pass counts are exact and every known failure is listed by name: the test fails when an
// unlisted test fails or a listed one starts passing. Counts are copied to docs/conformance.md.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createJsonSchemaValidator } from "../../src/validators/json-schema/index.ts";
import type { Draft } from "../../src/validators/json-schema/drafts.ts";

const SUITE = fileURLToPath(new URL("../../../shared/conformance/json-schema-test-suite", import.meta.url));
const PRESENT = existsSync(join(SUITE, "tests"));
if (!PRESENT) console.warn(`JSON-Schema-Test-Suite not found at ${SUITE}: conformance tests skipped`);

const DRAFTS: Array<{ dir: string; draft: Draft; formatsByDefault: boolean }> = [
  { dir: "draft4", draft: "4", formatsByDefault: true },
  { dir: "draft6", draft: "6", formatsByDefault: true },
  { dir: "draft7", draft: "7", formatsByDefault: true },
  { dir: "draft2019-09", draft: "2019-09", formatsByDefault: false },
  { dir: "draft2020-12", draft: "2020-12", formatsByDefault: false },
];

/** Exact pass counts: [required, optional]. */
const EXPECTED_PASSES: Record<string, [number, number]> = {
  draft4: [618, 317],
  draft6: [839, 430],
  draft7: [927, 789],
  "draft2019-09": [1258, 914],
  "draft2020-12": [1298, 925],
};

const VOCAB = "custom meta-schema vocabularies ($vocabulary) are not supported: validation is always on";
const HOSTNAME = "typebox's hostname format refuses '--' in the 3rd-4th position (the later IDNA rule)";
const IRI = "typebox's iri format refuses an uppercase IPvFuture version letter";
const CONTENT = "contentEncoding/contentMediaType are annotations only: content is not decoded";

/** Known failures by "file | group | test", with the reason. */
const KNOWN_FAILURES: Record<string, Record<string, string>> = {
  draft4: {
    "optional/format/hostname.json | validation of host names | hostname with consecutive hyphens (RFC1123)":
      HOSTNAME,
    "optional/zeroTerminatedFloats.json | some languages do not distinguish between different types of numeric value | a float is not an integer even without fractional part":
      "JSON.parse turns 1.0 into 1; only draft 4 tells them apart",
  },
  draft6: {
    "optional/format/hostname.json | validation of host names | hostname with consecutive hyphens (RFC1123)":
      HOSTNAME,
  },
  draft7: {
    "optional/content.json | validation of binary string-encoding | an invalid base64 string (% is not a valid character)":
      CONTENT,
    "optional/content.json | validation of binary-encoded media type documents | a validly-encoded invalid JSON document":
      CONTENT,
    "optional/content.json | validation of binary-encoded media type documents | an invalid base64 string that is valid JSON":
      CONTENT,
    "optional/content.json | validation of string-encoded content based on media type | an invalid JSON document":
      CONTENT,
    "optional/format/iri.json | validation of IRIs | an IPvFuture host with an uppercase version letter is valid":
      IRI,
  },
  "draft2019-09": {
    "vocabulary.json | schema that uses custom metaschema with with no validation vocabulary | no validation: invalid number, but it still validates":
      VOCAB,
    "optional/format/iri.json | validation of IRIs | an IPvFuture host with an uppercase version letter is valid":
      IRI,
  },
  "draft2020-12": {
    "vocabulary.json | schema that uses custom metaschema with with no validation vocabulary | no validation: invalid number, but it still validates":
      VOCAB,
    "optional/format/iri.json | validation of IRIs | an IPvFuture host with an uppercase version letter is valid":
      IRI,
  },
};

function jsonFiles(dir: string, recursive: boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (recursive) out.push(...jsonFiles(p, true));
    } else if (name.endsWith(".json")) out.push(p);
  }
  return out;
}

function loadRemotes(): Record<string, unknown> {
  const base = join(SUITE, "remotes");
  const out: Record<string, unknown> = {};
  for (const file of jsonFiles(base, true)) {
    out[`http://localhost:1234/${relative(base, file).split("\\").join("/")}`] = JSON.parse(
      readFileSync(file, "utf8"),
    );
  }
  return out;
}

interface Tally {
  passed: number;
  failed: string[];
}

function runFiles(files: string[], root: string, draft: Draft, assertFormats: boolean): Tally {
  const validator = createJsonSchemaValidator({ resources: REMOTES });
  const tally: Tally = { passed: 0, failed: [] };
  const encoder = new TextEncoder();
  for (const file of files) {
    const rel = relative(root, file).split("\\").join("/");
    for (const group of JSON.parse(readFileSync(file, "utf8"))) {
      // Step configs take an object schema: a boolean root becomes its object equivalent.
      const schema = group.schema === true ? {} : group.schema === false ? { not: {} } : group.schema;
      const config = { schema, draft, assert_formats: assertFormats };
      const names = group.tests.map(
        (t: { description: string }) => `${rel} | ${group.description} | ${t.description}`,
      );
      if (validator.checkConfig(config).length > 0) {
        tally.failed.push(...names);
        continue;
      }
      const run = validator.compile(config);
      group.tests.forEach((t: { data: unknown; valid: boolean }, i: number) => {
        const text = JSON.stringify(t.data);
        const r = run(
          { text, bytes: encoder.encode(text), fileType: "JSON", filename: null },
          { maxFindings: 100 },
        );
        const valid = !r.findings.some((f) => f.severity === "error");
        if (valid === t.valid) tally.passed++;
        else tally.failed.push(names[i]);
      });
    }
  }
  return tally;
}

const REMOTES = PRESENT ? loadRemotes() : {};

describe("JSON-Schema-Test-Suite", () => {
  for (const { dir, draft, formatsByDefault } of DRAFTS) {
    test.skipIf(!PRESENT)(`${dir}: exact pass counts, known failures listed`, () => {
      const root = join(SUITE, "tests", dir);
      const required = runFiles(jsonFiles(root, false), root, draft, formatsByDefault);
      const optional = runFiles(jsonFiles(join(root, "optional"), true), root, draft, true);
      const failed = [...required.failed, ...optional.failed].sort();
      const known = Object.keys(KNOWN_FAILURES[dir]).sort();
      expect({ unexpectedFailures: failed.filter((n) => !known.includes(n)) }).toEqual({
        unexpectedFailures: [],
      });
      expect({ nowPassing: known.filter((n) => !failed.includes(n)) }).toEqual({ nowPassing: [] });
      expect([required.passed, optional.passed]).toEqual(EXPECTED_PASSES[dir]);
    });
  }
});
