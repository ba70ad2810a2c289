// The YAML reader says what it finds in findings, never on the server's stderr.
import { describe, expect, test } from "bun:test";
import { collectWarnings } from "../../helpers/warnings.ts";
import { run } from "./helpers.ts";

const warnings = collectWarnings();

describe("a key that is a sequence or a mapping emits no process warning", () => {
  // yaml's toJS names such a key by its text and, at its default logLevel "warn", tells the
  // process so (process.emitWarning: "(node:…) Warning: Keys with collection values will be
  // stringified …" on the server's stderr, once per submission). The syntax step reads YAML as
  // YAML and accepts the key; json_schema and assertions give their own yaml.key_not_scalar.
  test.each([
    ["? [a, b]\n: 1\n", "syntax", {}],
    ["{ {x: 1}: y }\n", "syntax", {}],
    ["? [a, b]\n: 1\n", "json_schema", { schema: {} }],
    ["? [a, b]\n: 1\n", "assertions", { rules: [{ id: "r", expr: "true", message: "m" }] }],
  ] as const)("%j through %s", async (doc, slug, config) => {
    const r = run(slug, config, doc, "YAML");
    await warnings.settled();
    expect(warnings.messages).toEqual([]);
    expect(r.findings.map((f) => f.code)).toEqual(slug === "syntax" ? [] : ["yaml.key_not_scalar"]);
  });
});
