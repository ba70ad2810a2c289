// What the OpenAPI document says about starting a run (operation startRun): the three request
// modes as one requestBody, the request headers, and the answer headers of a 201 and a 202.
// Documentation only: src/runs/intake/modes.ts reads the request itself.
import { t } from "elysia";
import { type OperationDetail, header, param } from "../http/openapi/components.ts";
import { RunEnvelope, RunMultipart } from "./model.ts";

const START_RUN = `Three request modes:

- **Raw**: the body is the document; Content-Type is its media type (JSON, XML, YAML, CSV or text types, with an optional charset); \`Content-Encoding: base64\` when it is base64; \`X-Filename\` names it.
- **JSON envelope**: \`Content-Type: application/json\` and an object with \`content\` and only the keys of RunEnvelope (\`X-Submission-Mode\` overrides the guess between raw JSON and envelope).
- **Multipart**: \`multipart/form-data\` with a \`file\` part and optional text parts, read as an envelope.

201 with the results when the run finishes within the wait (ASSAY_SYNC_WAIT_MS, or \`Prefer: wait=N\`), else 202 with \`Location\` and \`Retry-After\` (\`Prefer: respond-async\` asks for it at once). With \`Idempotency-Key\`, a retry replays the first answer.`;

const TEXT_BODY = { schema: { type: "string", description: "The document (raw mode)" } };
/** The run request's media types: each raw type Assay reads, the envelope, multipart. */
const RUN_BODY = {
  "application/json": {
    schema: t.Union([RunEnvelope, t.Unknown({ description: "Any JSON document (raw mode)" })]),
  },
  "text/json": TEXT_BODY,
  "application/xml": TEXT_BODY,
  "text/xml": TEXT_BODY,
  "application/yaml": TEXT_BODY,
  "application/x-yaml": TEXT_BODY,
  "text/yaml": TEXT_BODY,
  "text/x-yaml": TEXT_BODY,
  "text/csv": TEXT_BODY,
  "application/csv": TEXT_BODY,
  "text/tab-separated-values": TEXT_BODY,
  "text/plain": TEXT_BODY,
  "multipart/form-data": { schema: RunMultipart },
};
const RUN_HEADERS = {
  Location: header("Location"),
  "Preference-Applied": header("PreferenceApplied"),
  "Idempotent-Replayed": header("IdempotentReplayed"),
};

export const START_RUN_DOC: Omit<OperationDetail, "tags"> = {
  operationId: "startRun",
  summary: "Submit data and start a run",
  description: START_RUN,
  parameters: [
    param("Prefer"),
    param("IdempotencyKey"),
    param("XFilename"),
    param("ContentEncoding"),
    param("XSubmissionMode"),
  ],
  requestBody: {
    required: true,
    // A media type map cannot hold a structured-suffix family (`application/*+json` is no range).
    description:
      "Raw mode also takes every `application/*+json` type (read as JSON) and every `application/*+xml` type (read as XML), each with an optional charset (CONTRACT §4).",
    content: RUN_BODY,
  },
  responses: {
    201: { description: "The run finished within the wait: its results", headers: RUN_HEADERS },
    202: {
      description: "Not finished yet: poll Location after Retry-After seconds",
      headers: { ...RUN_HEADERS, "Retry-After": header("RetryAfter") },
    },
  },
};
