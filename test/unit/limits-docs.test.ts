// docs/limits.md's tables are where operators and client authors look a bound up: each row's
// bound must be the value the code enforces (src/ constants and the settings' defaults). A bound
// changed in the code without its row, or a row edited to a value the code does not hold, fails
// here naming the row.
import { describe, expect, test } from "bun:test";
import { SETTINGS } from "../../src/config.ts";
import { MAX_BODY_DEPTH, MAX_BODY_TOKENS, SCHEMA_BODY_BYTES } from "../../src/http/limits.ts";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../src/http/pagination.ts";
import { REPORT_MAX_FINDINGS } from "../../src/reports/routes.ts";
import { MAX_METADATA_DEPTH } from "../../src/runs/intake/depth.ts";
import { MAX_CONTENT_TYPE_LENGTH } from "../../src/runs/intake/modes.ts";
import { RUN_FINDINGS_INLINE } from "../../src/runs/present.ts";
import { MAX_SCHEMA_BYTES, MAX_XSD_BYTES } from "../../src/schemas/service.ts";
import { MAX_ACTIVE_TOKENS } from "../../src/tokens/service.ts";
import {
  DEFAULT_MAX_FINDINGS,
  MAX_CSV_COLUMNS,
  MAX_CSV_ROWS,
  MAX_FINDING_MESSAGE_CHARS,
  MAX_JSON_DEPTH,
  MAX_MAX_FINDINGS,
  MAX_SCHEMATRON_ATTRIBUTES,
  MAX_STEP_FINDING_CHARS,
  MAX_XML_DEPTH,
  MAX_YAML_ALIAS_COUNT,
} from "../../src/validators/limits.ts";
import {
  MAX_PINNED_CONFIG_BYTES,
  MAX_RETENTION_DAYS,
  MAX_STEPS,
  MAX_STEP_CONFIG_BYTES,
  MAX_WORKFLOW_PINNED_BYTES,
} from "../../src/workflows/check.ts";

const MiB = 1_048_576;
const def = (key: string) => SETTINGS.find((s) => s.key === key)!.def as number;
/** 200000 → "200,000", as the page writes numbers of five digits or more. */
const n = (v: number) => v.toLocaleString("en-US");

/** Each row's leading text, and what its bound cell (the second) starts with. */
const ROWS: [string, string][] = [
  ["Requests per token", `${def("rate_limit_per_minute")} / minute`],
  ["Run starts per token", `${def("rate_limit_runs_per_minute")} / minute`],
  ["Requests per user", `${def("rate_limit_user_per_minute")} / minute`],
  ["Run starts per user", `${def("rate_limit_user_runs_per_minute")} / minute`],
  ["Failed authentication per client address", `${def("rate_limit_ip_per_minute")} / minute`],
  ["Pings and redeliveries per webhook", `${def("rate_limit_webhook_sends_per_minute")} / minute`],
  ["Run submission body", `${def("max_payload_bytes") / MiB} MiB`],
  ["Any other body", `${def("max_body_bytes") / MiB} MiB`],
  ["A stored schema's body", `${SCHEMA_BODY_BYTES / MiB} MiB`],
  [
    "A stored schema |",
    `JSON Schema ${MAX_SCHEMA_BYTES / MiB} MiB of JSON; XSD document ${MAX_XSD_BYTES / MiB} MiB`,
  ],
  [
    "A step config with its snapshot",
    `${MAX_PINNED_CONFIG_BYTES / MiB} MiB of JSON (the author's part: ${MAX_STEP_CONFIG_BYTES / MiB} MiB)`,
  ],
  ["All of a workflow's step configs", `${MAX_WORKFLOW_PINNED_BYTES / MiB} MiB of JSON`],
  ["Nesting in API request bodies", `${MAX_BODY_DEPTH} levels`],
  ["Values in API request bodies", `${n(MAX_BODY_TOKENS)} structural characters`],
  ["A workflow's `retention_days`", `0–${MAX_RETENTION_DAYS} or \`null\``],
  ["A step's `order`", `1–${MAX_STEPS},`],
  ["Nesting of a run envelope's `metadata`", `${MAX_METADATA_DEPTH} levels`],
  ["Nesting of a run envelope's object or array `content`", `${MAX_JSON_DEPTH} levels`],
  ["Findings in a run answer", `${RUN_FINDINGS_INLINE} in all`],
  ["Findings in a report", n(REPORT_MAX_FINDINGS)],
  ["Submission metadata", `${def("max_metadata_bytes") / 1024} KiB`],
  ["Submission content type", `${MAX_CONTENT_TYPE_LENGTH} characters`],
  ["Steps per workflow", `${MAX_STEPS}`],
  ["Save-time check of a workflow", `${def("check_timeout_ms") / 1000} s`],
  ["Save-time check of a stored schema", `${def("check_timeout_ms") / 1000} s`],
  ["One step config", `${MAX_STEP_CONFIG_BYTES / MiB} MiB of JSON`],
  ["`page_size` of every list", `1–${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})`],
  ["Queued runs (not yet taken by a worker)", n(def("max_queue"))],
  ["Queued runs of one org", `half of the above, ${n(def("max_queue") / 2)}`],
  ["JSON / YAML nesting", `${MAX_JSON_DEPTH} levels`],
  ["YAML aliases", `${MAX_YAML_ALIAS_COUNT}`],
  ["YAML document read by a step", `${def("max_yaml_bytes") / MiB} MiB of UTF-8`],
  ["XML nesting", `${MAX_XML_DEPTH} levels`],
  ["Attributes of one element", n(MAX_SCHEMATRON_ATTRIBUTES)],
  ["Elements of a document a Schematron step reads", `${n(def("max_schematron_elements"))} start tags`],
  ["CSV columns / rows", `${n(MAX_CSV_COLUMNS)} / ${n(MAX_CSV_ROWS)}`],
  ["Time per step", `${def("step_timeout_ms") / 1000} s`],
  ["Heap a validation worker keeps after a full collection", `${def("worker_max_heap_mb")} MB a worker`],
  ["Time per run, its steps in all", `${def("run_timeout_ms") / 60_000} min`],
  ["Findings per step", `${DEFAULT_MAX_FINDINGS} (\`max_findings\`, up to ${n(MAX_MAX_FINDINGS)})`],
  ["A finding's message", `${n(MAX_FINDING_MESSAGE_CHARS)} characters`],
  ["A step's findings in all", `${MAX_STEP_FINDING_CHARS / MiB} MiB of characters`],
  ["Sending a request body, or staying idle", `${def("idle_timeout_s")} s`],
];

describe("docs/limits.md", () => {
  test("every bound in its tables is the one the code enforces", async () => {
    const lines = (await Bun.file(new URL("../../docs/limits.md", import.meta.url)).text()).split("\n");
    const wrong = ROWS.flatMap(([row, bound]) => {
      const line = lines.find((l) => l.startsWith(`| ${row}`));
      if (!line) return [`no row "${row}"`];
      const cell =
        line
          .slice(2 + row.length)
          .split(" | ")
          [row.endsWith("|") ? 0 : 1]?.trim() ?? "";
      return cell.startsWith(bound)
        ? []
        : [`"${row}": the page says "${cell.slice(0, 80)}", the code ${bound}`];
    });
    expect(wrong).toEqual([]);
  });

  test("the active-token bound in docs/access.md is the code's", async () => {
    const text = await Bun.file(new URL("../../docs/access.md", import.meta.url)).text();
    expect(text.replace(/\s+/g, " ")).toContain(`A user holds at most ${MAX_ACTIVE_TOKENS} active tokens`);
  });
});
