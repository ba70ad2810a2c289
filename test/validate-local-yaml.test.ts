// `assay validate --local` reads ASSAY_MAX_YAML_BYTES from its own environment, as a server's
// workers get it from the server's config (src/validators/yaml-limit.ts): a YAML file over it is
// yaml.too_large, not parsed; under it, or with the limit off, it is read.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAssay } from "./helpers/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "assay-validate-yaml-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  join(dir, "w.yaml"),
  "slug: y\nname: Y\nallowed_file_types: [YAML]\nsteps:\n  - name: syntax\n    validator: syntax\n    config: {}\n",
);
const doc = "- a\n".repeat(100); // 400 bytes
writeFileSync(join(dir, "d.yaml"), doc);

const validate = (env: Record<string, string>) =>
  runAssay(["validate", "--local", "--workflow-file", "w.yaml", "d.yaml"], { cwd: dir, env });

test("over the limit: yaml.too_large at 1:1, exit 1; at it, or with 0 (no limit), it passes", async () => {
  const over = await validate({ ASSAY_MAX_YAML_BYTES: "399" });
  expect([over.code, over.out]).toEqual([
    1,
    "FAIL d.yaml: failed (1 error)\nd.yaml:1:1 error yaml.too_large the YAML document is 400 bytes; YAML is read up to 399 bytes (ASSAY_MAX_YAML_BYTES): reading it takes about 175 bytes of memory per byte\n1 file: 0 passed, 1 failed.\n",
  ]);
  for (const limit of ["400", "0"]) {
    const r = await validate({ ASSAY_MAX_YAML_BYTES: limit });
    expect([limit, r.code, r.err]).toEqual([limit, 0, ""]);
  }
});

test("a bad limit in the environment is exit 2, named as serve names it, and nothing is validated", async () => {
  const cases: [Record<string, string>, string][] = [
    [{ ASSAY_MAX_YAML_BYTES: "4M" }, 'ASSAY_MAX_YAML_BYTES: "4M" is not an integer'],
    [{ ASSAY_MAX_YAML_BYTES: "-1" }, "ASSAY_MAX_YAML_BYTES: -1 is outside 0..1073741824"],
    [
      { ASSAY_MAX_YAML_BYTES: "1.5", ASSAY_MAX_SCHEMATRON_ELEMENTS: "many" },
      'ASSAY_MAX_YAML_BYTES: "1.5" is not an integer; ASSAY_MAX_SCHEMATRON_ELEMENTS: "many" is not an integer',
    ],
  ];
  for (const [env, problem] of cases)
    expect(await validate(env)).toEqual({ code: 2, out: "", err: `assay validate: ${problem}\n` });
});
