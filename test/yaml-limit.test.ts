// ASSAY_MAX_YAML_BYTES (src/validators/yaml-limit.ts): the `yaml` library needs ~175 bytes of
// memory per byte of YAML, so a step refuses to parse a document over the limit with the finding
// yaml.too_large, before parsing, in every validator that reads YAML; the limit reaches the
// workers from the server's config. text_rules reads the bytes and has no such limit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const LIMIT = 2048;
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ max_yaml_bytes: LIMIT });
  const wf = (slug: string, step: Record<string, unknown>) =>
    createWorkflow(s, s.rootToken, { slug, allowed_file_types: ["YAML"], steps: [{ name: slug, ...step }] });
  await wf("syntax", { validator: "syntax", config: {} });
  await wf("schema", { validator: "json_schema", config: { schema: { type: "array" } } });
  await wf("rules", {
    validator: "assertions",
    config: { rules: [{ id: "list", expr: "type(data) == list", message: "a list" }] },
  });
  await wf("text", { validator: "text_rules", config: { max_lines: 10_000 } });
});
afterAll(() => s.close());

/** A YAML sequence of exactly `bytes` bytes of UTF-8, "é" (2 bytes) in every item. */
function yamlOf(bytes: number): string {
  const item = "- é\n"; // 5 bytes
  const body = item.repeat(Math.floor((bytes - 2) / 5));
  return `${body}${"#".repeat(bytes - Buffer.byteLength(body) - 1)}\n`;
}

const post = (slug: string, body: string) =>
  call(s, "POST", `/api/v1/orgs/acme/workflows/${slug}/runs/`, {
    token: s.rootToken,
    raw: body,
    headers: { "content-type": "application/yaml", prefer: "wait=60" },
  });

describe("a YAML document over ASSAY_MAX_YAML_BYTES is not parsed", () => {
  test("the helper builds documents of the exact size", () => {
    expect([LIMIT, LIMIT + 1].map((n) => Buffer.byteLength(yamlOf(n)))).toEqual([LIMIT, LIMIT + 1]);
  });
  for (const slug of ["syntax", "schema", "rules"])
    test(`${slug}: at the limit it is read; one byte over, yaml.too_large at 1:1 and the run fails`, async () => {
      const at = await post(slug, yamlOf(LIMIT));
      expect([at.status, at.json.status, at.json.steps[0].findings]).toEqual([201, "succeeded", []]);
      const over = await post(slug, yamlOf(LIMIT + 1));
      expect([over.status, over.json.status]).toEqual([201, "failed"]);
      expect(over.json.steps[0].findings).toEqual([
        {
          severity: "error",
          code: "yaml.too_large",
          message: `the YAML document is ${LIMIT + 1} bytes; YAML is read up to ${LIMIT} bytes (ASSAY_MAX_YAML_BYTES): reading it takes about 175 bytes of memory per byte`,
          path: null,
          line: 1,
          column: 1,
          rule: null,
        },
      ]);
    });
  test("text_rules reads a YAML file of any size", async () => {
    const r = await post("text", yamlOf(LIMIT * 4));
    expect([r.status, r.json.status, r.json.steps[0].findings]).toEqual([201, "succeeded", []]);
  });
});
