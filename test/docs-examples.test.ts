// The docs' examples as an integrator runs them: each block marked `<!-- docs-example:NAME -->`
// in docs/ is taken from the page as it stands and run against a real server, only its
// placeholders (the server's URL, the token) replaced. The README's quick start has its own test
// (test/quickstart.test.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { parse } from "yaml";
import { MAIN, runProcess } from "./helpers/cli.ts";
import { until } from "./helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";
import { testTempDir } from "./helpers/temp.ts";

const ROOT = join(import.meta.dir, "..");
const doc = (name: string) => readFileSync(join(ROOT, "docs", name), "utf8");

/** The fenced block right after `<!-- docs-example:NAME -->` on a page. */
function example(page: string, name: string): string {
  const m = new RegExp(`<!-- docs-example:${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\`\`\`\\n`).exec(page);
  if (!m) throw new Error(`no block docs-example:${name}`);
  return m[1]!;
}

const NODE = Bun.which("node") ?? process.execPath;
let s: TestServer;
let dir: string;
let bin: string;

/** The shell an example runs in: `assay` (from source) and `node` on PATH, no developer's ASSAY_SERVER/TOKEN. */
function shellEnv(extra: Record<string, string> = {}): Record<string, string> {
  const { ASSAY_SERVER: _s, ASSAY_TOKEN: _t, ...base } = process.env as Record<string, string>;
  return { ...base, PATH: `${bin}:${process.env.PATH}`, ...extra };
}

const sh = (script: string, cwd: string, env: Record<string, string>) =>
  runProcess(["bash", "--noprofile", "--norc", "-e", "-c", script], { cwd, env });

/** A CI job's workspace: the two data files and the light client "in the repository". */
function workspace(name: string): string {
  const ws = join(dir, name);
  mkdirSync(join(ws, "data"), { recursive: true });
  writeFileSync(join(ws, "data/a.json"), '{"id": 1}\n');
  writeFileSync(join(ws, "data/b.json"), '{\n  "id": "x"\n}\n');
  writeFileSync(join(ws, "assay-validate.mjs"), readFileSync(join(dir, "assay-validate.mjs")));
  return ws;
}

beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true });
  dir = testTempDir("assay-docs-examples-");
  bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "assay"), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
  chmodSync(join(bin, "assay"), 0o755);
  if (NODE === process.execPath) {
    writeFileSync(join(bin, "node"), `#!/bin/sh\nexec "${process.execPath}" "$@"\n`);
    chmodSync(join(bin, "node"), 0o755);
  }
  // dist/assay-validate.mjs as `npm run build` makes it (scripts/build.ts).
  const light = Bun.spawnSync([
    process.execPath,
    "build",
    "--target=node",
    "--format=esm",
    `--outfile=${join(dir, "assay-validate.mjs")}`,
    join(ROOT, "src/cli/light.ts"),
  ]);
  expect(light.exitCode).toBe(0);
  // The README's quick-start workflow, which the docs' examples validate against.
  const wf = await call(s, "POST", "/api/v1/orgs/acme/workflows/", {
    token: s.rootToken,
    body: {
      slug: "orders",
      name: "Orders",
      allowed_file_types: ["JSON"],
      steps: [
        {
          name: "schema",
          validator: "json_schema",
          config: { schema: { type: "object", required: ["id"], properties: { id: { type: "integer" } } } },
        },
      ],
    },
  });
  expect(wf.status).toBe(201);
});
afterAll(async () => {
  await s?.close();
});

describe("docs/webhooks.md: the receiver", () => {
  /** The receiver's stdout, line by line, and a wait for a line to appear. */
  function lines(stream: ReadableStream<Uint8Array>) {
    const seen: string[] = [];
    const waiters: { line: string; n: number; resolve: () => void }[] = [];
    const count = (line: string) => seen.filter((l) => l === line).length;
    const settle = () => {
      for (const w of [...waiters])
        if (count(w.line) >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
    };
    void (async () => {
      let rest = "";
      const decoder = new TextDecoder();
      const reader = stream.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        rest += decoder.decode(value);
        const parts = rest.split("\n");
        rest = parts.pop()!;
        seen.push(...parts);
        settle();
      }
    })();
    return {
      seen,
      count,
      /** Resolves once `line` has been printed `n` times. */
      waitFor(line: string, n = 1) {
        return new Promise<void>((resolve) => {
          waiters.push({ line, n, resolve });
          settle();
        });
      },
    };
  }

  test("verifies a real ping and a failed run's deliveries, the old secret after a rotation, and refuses a forged request with 401", async () => {
    const free = createServer().listen(0, "127.0.0.1");
    await new Promise((r) => free.once("listening", r));
    const port = (free.address() as AddressInfo).port;
    await new Promise((r) => free.close(r));
    const target = `http://127.0.0.1:${port}/assay`;

    const created = await call(s, "POST", "/api/v1/orgs/acme/webhooks/", {
      token: s.rootToken,
      body: { url: target, events: ["run.completed", "run.failed"] },
    });
    expect(created.status).toBe(201);
    expect(created.json.secret).toMatch(/^whsec_/);
    const hook = `/api/v1/orgs/acme/webhooks/${created.json.id}`;

    const file = join(dir, "receiver.mjs");
    writeFileSync(file, example(doc("webhooks.md"), "webhook-receiver"));
    const receiver = Bun.spawn([NODE, file], {
      env: { ...process.env, ASSAY_WEBHOOK_SECRET: created.json.secret, PORT: String(port) },
      stdout: "pipe",
      stderr: "inherit",
    });
    try {
      const out = lines(receiver.stdout);
      // A request signed with another key, once the receiver listens.
      const forged = async () => {
        let answer: Response | undefined;
        await until(async () => {
          try {
            answer = await fetch(target, {
              method: "POST",
              headers: {
                "webhook-id": "msg_forged",
                "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
                "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")}`,
              },
              body: '{"type":"ping"}',
            });
            return true;
          } catch {
            if (receiver.exitCode !== null) throw new Error("the receiver exited");
            return false;
          }
        }, "the webhook receiver to listen");
        return answer!;
      };
      expect((await forged()).status).toBe(401);
      await out.waitFor("refused: bad signature");

      expect((await call(s, "POST", `${hook}/ping/`, { token: s.rootToken })).status).toBe(202);
      await out.waitFor(`verified ping ${target}`);

      const run = await call(s, "POST", "/api/v1/orgs/acme/workflows/orders/runs/", {
        token: s.rootToken,
        raw: '{"id": "seven"}',
        headers: { "content-type": "application/json" },
      });
      expect([run.status, run.json.status]).toEqual([201, "failed"]);
      await out.waitFor("verified run.completed failed");
      await out.waitFor("verified run.failed failed");

      // After a rotation the old secret keeps verifying for 24 h (the header holds both).
      const rotated = await call(s, "POST", `${hook}/rotate-secret/`, { token: s.rootToken });
      expect(rotated.status).toBe(200);
      expect(rotated.json.secret).not.toBe(created.json.secret);
      expect((await call(s, "POST", `${hook}/ping/`, { token: s.rootToken })).status).toBe(202);
      await out.waitFor(`verified ping ${target}`, 2);

      // The receiver prints before it answers: the last attempt may not be recorded yet.
      let deliveries = await call(s, "GET", `${hook}/deliveries/`, { token: s.rootToken });
      await until(async () => {
        deliveries = await call(s, "GET", `${hook}/deliveries/`, { token: s.rootToken });
        return !deliveries.json.results.some((d: { status: string }) => d.status === "pending");
      }, "every delivery's last attempt to be recorded");
      expect(deliveries.status).toBe(200);
      expect(
        deliveries.json.results
          .map((d: { event: string; status: string; attempts: { http_status: number }[] }) => [
            d.event,
            d.status,
            d.attempts.map((a) => a.http_status),
          ])
          .sort(),
      ).toEqual([
        ["ping", "succeeded", [204]],
        ["ping", "succeeded", [204]],
        ["run.completed", "succeeded", [204]],
        ["run.failed", "succeeded", [204]],
      ]);
      expect(out.seen.filter((l) => l.startsWith("verified")).length).toBe(4);
    } finally {
      receiver.kill();
      await receiver.exited;
    }
  });
});

describe("docs/ci-usage.md", () => {
  test("the --local block, as written, exports the workflow and validates without a server (exit 1, the finding)", async () => {
    const ws = workspace("local");
    const where: Record<string, string> = s.databaseUrl
      ? { ASSAY_DATABASE_URL: s.databaseUrl }
      : { ASSAY_DATA_DIR: s.dataDir };
    const r = await sh(example(doc("ci-usage.md"), "local"), ws, shellEnv(where));
    expect(r.err).toBe("");
    expect(r.out).toBe(
      [
        "PASS data/a.json: succeeded (no findings)",
        "FAIL data/b.json: failed (1 error)",
        "data/b.json:2:9 error json_schema.type must be integer",
        "2 files: 1 passed, 1 failed.",
        "",
      ].join("\n"),
    );
    expect(r.code).toBe(1);
  });

  test("the GitHub Actions job's Validate step writes the SARIF file the upload step reads, and fails the step (exit 1)", async () => {
    const ws = workspace("github");
    const job = parse(example(doc("ci-usage.md"), "github-actions")).jobs.validate;
    const validate = job.steps.find((st: { name?: string }) => st.name === "Validate");
    const upload = job.steps.find((st: { uses?: string }) =>
      st.uses?.startsWith("github/codeql-action/upload-sarif"),
    );
    // The two placeholders this test fills in: the server's URL and the token.
    expect(Object.keys(validate.env).sort()).toEqual(["ASSAY_SERVER", "ASSAY_TOKEN"]);
    const r = await sh(validate.run, ws, shellEnv({ ASSAY_SERVER: s.url, ASSAY_TOKEN: s.rootToken }));
    expect(r.code).toBe(1);
    expect(r.out).toContain("data/b.json:2:9 error json_schema.type must be integer");
    expect(upload.if).toBe("always()");
    const sarif = JSON.parse(readFileSync(join(ws, upload.with.sarif_file), "utf8"));
    expect(sarif.version).toBe("2.1.0");
    expect(sarif.runs[0].results.map((x: { ruleId: string }) => x.ruleId)).toEqual(["json_schema.type"]);
  });

  test("the GitLab job, run as GitLab runs it (script stops at the first failure, after_script always), leaves the JUnit report and the HTML page", async () => {
    const ws = workspace("gitlab");
    const job = parse(example(doc("ci-usage.md"), "gitlab")).validate;
    expect(job.variables.ASSAY_SERVER).toBe("https://assay.example.com");
    const env = shellEnv({ ...job.variables, ASSAY_SERVER: s.url, ASSAY_TOKEN: s.rootToken });
    let failed = 0;
    for (const line of job.script as string[]) {
      failed = (await sh(line, ws, env)).code;
      if (failed !== 0) break;
    }
    expect(failed).toBe(1); // data/b.json broke a rule: the job fails
    for (const line of (job.after_script ?? []) as string[]) expect((await sh(line, ws, env)).code).toBe(0);
    expect(job.artifacts.when).toBe("always");
    const kept = [...(job.artifacts.paths ?? []), job.artifacts.reports.junit];
    expect(kept.sort()).toEqual(["assay-junit.xml", "assay-report.html"]);
    for (const f of kept) expect(existsSync(join(ws, f))).toBe(true);
    expect(readFileSync(join(ws, "assay-junit.xml"), "utf8")).toContain(
      '<testsuites name="assay" tests="2" failures="1"',
    );
    expect(readFileSync(join(ws, "assay-report.html"), "utf8")).toContain("json_schema.type");
  });
});
