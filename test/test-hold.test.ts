// The test-only `test_hold` validator (src/validators/test-hold/index.ts): it holds a step until
// the test opens a gate, exists only where ASSAY_TEST_GATES_DIR enables it, never runs inline,
// and works alike in a server of this process and in the built binary. Its time limit and cancel
// are proven where they are used: test/durability.test.ts and test/runs-flow.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.ts";
import { SETTINGS } from "../src/config.ts";
import { ensureBinary, serveBinary } from "./helpers/binary.ts";
import { createWorkflow, until, waitForRun } from "./helpers/fixtures.ts";
import { HOLD_WORKFLOW, createGates } from "./helpers/gates.ts";
import { type TestServer, call, errorBody, restartTestServer, startTestServer } from "./helpers/server.ts";

const JSON_CT = { "content-type": "application/json" };
const runs = "/api/v1/orgs/acme/workflows/hold/runs/";
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ workers: 1, inline_jobs: true });
  await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
});
afterAll(() => s.close());

describe("a held step", () => {
  test("runs until its gate opens, then passes; it never runs in the inline lane", async () => {
    const inlineBefore = s.deps.executor.stats().inlineJobs;
    const gate = s.gates.gate();
    const r = await call(s, "POST", runs, {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    await gate.held();
    const during = await call(s, "GET", new URL(r.json.url).pathname, { token: s.rootToken });
    expect(during.json.status).toBe("running");
    expect(during.json.steps[0].status).toBe("running");
    gate.open();
    expect((await waitForRun(s, s.rootToken, r.json.url)).status).toBe("succeeded");
    expect(s.deps.executor.stats().inlineJobs).toBe(inlineBefore);
  });

  test("a gate opened with fail fails the step with one finding", async () => {
    const gate = s.gates.gate();
    gate.open("fail");
    const r = await call(s, "POST", runs, { token: s.rootToken, raw: gate.doc(), headers: JSON_CT });
    expect(r.json.status).toBe("failed");
    expect(r.json.steps[0].findings).toEqual([
      expect.objectContaining({ code: "test_hold.failed", severity: "error" }),
    ]);
  });

  test("a document without a gate fails at once, never held", async () => {
    const r = await call(s, "POST", runs, { token: s.rootToken, raw: '{"gate":"../x"}', headers: JSON_CT });
    expect(r.json.status).toBe("failed");
    expect(r.json.steps[0].findings[0].code).toBe("test_hold.no_gate");
  });

  test("one gate holds every run that names it; each entry is counted", async () => {
    const gate = s.gates.gate();
    const a = await call(s, "POST", runs, {
      token: s.rootToken,
      raw: gate.doc(),
      headers: { ...JSON_CT, prefer: "respond-async" },
    });
    await gate.held(1);
    expect(gate.entered()).toBe(1);
    gate.open();
    const b = await call(s, "POST", runs, { token: s.rootToken, raw: gate.doc(), headers: JSON_CT });
    expect(b.json.status).toBe("succeeded");
    expect(gate.entered()).toBe(2);
    expect((await waitForRun(s, s.rootToken, a.json.url)).status).toBe("succeeded");
  });
});

describe("only where a test enables it", () => {
  test("a server without ASSAY_TEST_GATES_DIR refuses it at save time and fails a stored one", async () => {
    const gated = await startTestServer({ workers: 1 });
    await createWorkflow(gated, gated.rootToken, HOLD_WORKFLOW);
    const plain = await restartTestServer(gated, { test_gates_dir: null, workers: 1 });
    try {
      const r = await call(plain, "POST", "/api/v1/orgs/acme/workflows/", {
        token: plain.rootToken,
        body: { ...HOLD_WORKFLOW, slug: "again", name: "again" },
      });
      expect(r.json).toEqual(
        errorBody(400, "invalid_request", "The workflow definition is invalid.", [
          {
            field: "steps[0].validator",
            code: "unknown_validator",
            message: 'Unknown validator "test_hold"; see GET /api/v1/validators/.',
          },
        ]),
      );
      // A workflow saved by a test server, run by a normal one: refused before anything is stored.
      const before = await plain.count("runs");
      const run = await call(plain, "POST", runs, {
        token: plain.rootToken,
        raw: plain.gates.gate().doc(),
        headers: JSON_CT,
      });
      expect(run.json).toEqual(
        errorBody(
          400,
          "file_type_unsupported",
          'Step 1 "hold" (test_hold) does not support JSON submissions.',
        ),
      );
      expect(await plain.count("runs")).toBe(before);
      const catalogue = await call(plain, "GET", "/api/v1/validators/", { token: plain.rootToken });
      expect(catalogue.status).toBe(200);
      expect(catalogue.text).not.toContain("test_hold");
    } finally {
      await plain.close();
    }
  });

  test("the setting comes from the environment only: no flag, not in serve --help", () => {
    expect(loadConfig({ ASSAY_TEST_GATES_DIR: "/tmp/g" }).test_gates_dir).toBe("/tmp/g");
    expect(loadConfig({}).test_gates_dir).toBeNull();
    expect(() => loadConfig({}, { test_gates_dir: "/tmp/g" })).toThrow("unknown option --test-gates-dir");
    expect(SETTINGS.map((x) => x.key as string)).not.toContain("test_gates_dir");
  });
});

describe("the built binary", () => {
  const dir = mkdtempSync(join(tmpdir(), "assay-hold-bin-"));
  const gates = createGates();
  afterAll(() => {
    gates.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  test("holds a run until the test opens the gate through the same files", async () => {
    const bin = ensureBinary();
    const dataDir = join(dir, "data");
    const init = Bun.spawnSync([bin, "init", "--org", "acme", "--admin", "root", "--data-dir", dataDir]);
    expect(init.exitCode).toBe(0);
    const token = init.stdout.toString().trim().split("\n").at(-1)!;
    const { proc, url } = await serveBinary(bin, dataDir, { ASSAY_TEST_GATES_DIR: gates.dir });
    try {
      const server = { url };
      await createWorkflow(server, token, HOLD_WORKFLOW);
      const gate = gates.gate();
      const r = await call(server, "POST", runs, {
        token,
        raw: gate.doc(),
        headers: { ...JSON_CT, prefer: "respond-async" },
      });
      await gate.held();
      const path = new URL(r.json.url).pathname;
      expect((await call(server, "GET", path, { token })).json.status).toBe("running");
      gate.open();
      await until(
        async () => (await call(server, "GET", path, { token })).json.status === "succeeded",
        "success",
      );
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  });
});
