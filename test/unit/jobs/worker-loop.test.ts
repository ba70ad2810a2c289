// runJob without a thread: the step rules (decode, compile cache, errors, caps) in isolation.
import { describe, expect, test } from "bun:test";
import { Lru } from "../../../src/jobs/lru.ts";
import type { FromWorker, RunJob } from "../../../src/jobs/protocol.ts";
import { type JobDeps, runJob } from "../../../src/jobs/worker-loop.ts";
import { RegexLimitError } from "../../../src/validators/shared/user-regex.ts";
import type { Finding, ValidatorDef } from "../../../src/validators/types.ts";

let compiles = 0;
const textLength: ValidatorDef = {
  slug: "len",
  name: "len",
  description: "",
  supportedFileTypes: ["TEXT"],
  configSchema: {},
  checkConfig: () => [],
  compile: (config) => {
    compiles++;
    return ({ text }) => ({
      findings: [
        {
          severity: "info",
          code: "len",
          message: `${(config as { p: string }).p}${text}`,
          path: null,
          line: text.length,
          column: null,
          rule: null,
        },
      ],
      truncated: false,
    });
  },
};

/** Stands for an engine that gives up on the input (shared/user-regex.ts throws this then). */
const atLimit: ValidatorDef = {
  ...textLength,
  slug: "limit",
  compile: () => () => {
    throw new RegexLimitError("^x", new RangeError("out of memory"));
  },
};

/** Stands for Schematron: each compile leaves XPath expressions in the thread for good. */
const retaining: ValidatorDef = {
  ...textLength,
  slug: "keeps",
  compile: (config) =>
    Object.assign(() => ({ findings: [], truncated: false }), {
      retains: Number((config as { n: number }).n),
    }),
};

function setup(requested: string[] = []) {
  const posted: FromWorker[] = [];
  const defs: Record<string, ValidatorDef> = { len: textLength, limit: atLimit, keeps: retaining };
  const deps: JobDeps = {
    lookup: (slug) => defs[slug],
    cache: new Lru(8),
    retained: 0,
    post: (m) => posted.push(m),
    requestConfig: async (_jobId, key) => {
      requested.push(key);
      return { p: "re:" };
    },
  };
  return { deps, posted };
}

function job(bytes: number[], charset: string, steps: RunJob["steps"]): RunJob {
  return {
    jobId: "j",
    bytes: new Uint8Array(bytes).buffer,
    charset,
    fileType: "TEXT",
    filename: null,
    failFast: false,
    steps,
  };
}

const ends = (posted: FromWorker[]) => posted.flatMap((m) => (m.type === "step_end" ? [m.outcome] : []));

describe("runJob", () => {
  test("a step whose compile retains says the worker's total in its step_end; a cached one says nothing", async () => {
    const { deps, posted } = setup();
    const steps = (keys: string[]) =>
      keys.map((key, i) => ({
        key,
        validator: i === 1 ? "len" : "keeps",
        config: { n: 3, p: "" },
        maxFindings: 5,
      }));
    await runJob(job([0x61], "utf-8", steps(["k1", "l", "k2"])), deps);
    await runJob({ ...job([0x61], "utf-8", steps(["k1", "l", "k3"])), jobId: "j2" }, deps);
    expect(posted.map((m) => (m.type === "step_end" ? [m.jobId, m.index, m.retained] : m.type))).toEqual([
      ["j", 0, 3],
      ["j", 1, undefined],
      ["j", 2, 6],
      ["j2", 0, undefined],
      ["j2", 1, undefined],
      ["j2", 2, 9],
    ]);
  });

  test("decodes with the job's charset", async () => {
    const { deps, posted } = setup();
    await runJob(
      job([0x63, 0x61, 0x66, 0xe9], "latin1", [
        { key: "a", validator: "len", config: { p: "" }, maxFindings: 5 },
      ]),
      deps,
    );
    expect(ends(posted)[0].findings[0].message).toBe("café");
    // One message for the whole single-step job: its step's end is the job's end.
    expect(posted).toEqual([
      { type: "step_end", jobId: "j", index: 0, outcome: expect.anything(), end: true },
    ]);
  });

  test("a result with an error ends the step in error and keeps its findings", async () => {
    const finding: Finding = {
      severity: "error",
      code: "x.stopped",
      message: "why",
      path: null,
      line: null,
      column: null,
      rule: "r",
    };
    const stopping: ValidatorDef = {
      ...textLength,
      slug: "stop",
      compile: () => () => ({ findings: [finding], truncated: false, error: "stopped: why" }),
    };
    const { deps, posted } = setup();
    deps.lookup = (slug) => (slug === "stop" ? stopping : undefined);
    await runJob(job([0x61], "utf-8", [{ key: "s", validator: "stop", config: {}, maxFindings: 5 }]), deps);
    expect(ends(posted)).toEqual([
      {
        status: "error",
        findings: [finding],
        truncated: false,
        durationMs: expect.any(Number),
        error: "stopped: why",
      },
    ]);
  });

  test("an unknown charset or validator errors the step", async () => {
    const { deps, posted } = setup();
    await runJob(
      job([0x61], "klingon", [
        { key: "a", validator: "len", config: { p: "" }, maxFindings: 5 },
        { key: "b", validator: "nope", config: {}, maxFindings: 5 },
      ]),
      deps,
    );
    expect(ends(posted).map((o) => o.error)).toEqual([
      'unsupported charset "klingon"',
      'unknown validator "nope"',
    ]);
  });

  test("an engine limit errors the step with a finding that says the data was not checked", async () => {
    const { deps, posted } = setup();
    await runJob(job([0x61], "utf-8", [{ key: "a", validator: "limit", config: {}, maxFindings: 5 }]), deps);
    const message =
      'the regular expression "^x" could not be evaluated on this input (out of memory); the data was not checked';
    expect(ends(posted)).toEqual([
      {
        status: "error",
        error: message,
        durationMs: expect.any(Number),
        truncated: false,
        findings: [
          {
            severity: "error",
            code: "regex.engine_limit",
            message,
            path: null,
            line: null,
            column: null,
            rule: "^x",
          },
        ],
      },
    ]);
  });

  test("compiles a key once and asks for a config it does not hold", async () => {
    const requested: string[] = [];
    const { deps, posted } = setup(requested);
    compiles = 0;
    const steps = [
      { key: "a", validator: "len", config: { p: "1:" }, maxFindings: 5 },
      { key: "a", validator: "len", maxFindings: 5 },
      { key: "b", validator: "len", maxFindings: 5 },
    ];
    await runJob(job([0x78], "utf-8", steps), deps);
    expect(ends(posted).map((o) => o.findings[0].message)).toEqual(["1:x", "1:x", "re:x"]);
    expect(requested).toEqual(["b"]);
    expect(compiles).toBe(2);
  });
});

describe("Lru", () => {
  test("evicts the least recently used key", () => {
    const lru = new Lru<string, number>(2);
    lru.set("a", 1);
    lru.set("b", 2);
    lru.get("a");
    lru.set("c", 3);
    expect([lru.has("a"), lru.has("b"), lru.has("c")]).toEqual([true, false, true]);
  });
});
