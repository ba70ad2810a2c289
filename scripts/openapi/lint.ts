// `npm run lint:openapi`: lints the OpenAPI document a started server serves with Redocly CLI
// (recommended rules) and Spectral (spectral:oas). Both run offline from node_modules; the
// rules waived, and why, are in scripts/openapi/redocly.yaml and spectral.yaml. Fails on any
// error or warning, so the document stays clean: the last line is the counts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startCheckServer } from "./server.ts";

const root = resolve(import.meta.dir, "../..");
const bin = (name: string) => join(root, "node_modules/.bin", name);
// No telemetry, no update check: the linters must not need the network.
const env = {
  ...process.env,
  REDOCLY_TELEMETRY: "off",
  REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
  NO_UPDATE_NOTIFIER: "1",
};

interface Problem {
  tool: string;
  severity: "error" | "warning";
  rule: string;
  where: string;
  message: string;
}

async function run(cmd: string[]): Promise<string> {
  const p = Bun.spawn(cmd, { cwd: root, env, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  await p.exited;
  if (!out.trim()) throw new Error(`${cmd[0]} printed nothing (exit ${p.exitCode}): ${err.slice(0, 2000)}`);
  return out;
}

async function redocly(file: string): Promise<Problem[]> {
  const out = await run([
    bin("redocly"),
    "lint",
    file,
    "--config",
    join(import.meta.dir, "redocly.yaml"),
    "--format",
    "json",
    "--max-problems",
    "10000",
  ]);
  const report = JSON.parse(out.slice(out.indexOf("{"))) as {
    problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
  };
  return report.problems.map((p) => ({
    tool: "redocly",
    severity: p.severity === "error" ? "error" : "warning",
    rule: p.ruleId,
    where: p.location[0]?.pointer ?? "",
    message: p.message,
  }));
}

async function spectral(file: string): Promise<Problem[]> {
  const out = await run([
    bin("spectral"),
    "lint",
    file,
    "--ruleset",
    join(import.meta.dir, "spectral.yaml"),
    "--format",
    "json",
    "--quiet",
  ]);
  const list = JSON.parse(out.slice(out.indexOf("["))) as {
    code: string;
    severity: number;
    message: string;
    path: (string | number)[];
  }[];
  // Severity 0 error, 1 warning, 2 information, 3 hint.
  return list
    .filter((p) => p.severity <= 1)
    .map((p) => ({
      tool: "spectral",
      severity: p.severity === 0 ? "error" : "warning",
      rule: p.code,
      where: `#/${p.path.join("/")}`,
      message: p.message,
    }));
}

const server = await startCheckServer();
const dir = mkdtempSync(join(tmpdir(), "assay-openapi-lint-"));
try {
  const file = join(dir, "openapi.json");
  writeFileSync(file, server.document);
  const results = { redocly: await redocly(file), spectral: await spectral(file) };
  let failed = false;
  const counts: string[] = [];
  for (const [tool, problems] of Object.entries(results)) {
    for (const p of problems) console.log(`${p.tool} ${p.severity} ${p.rule} ${p.where}: ${p.message}`);
    const errors = problems.filter((p) => p.severity === "error").length;
    const warnings = problems.length - errors;
    if (problems.length) failed = true;
    counts.push(`${tool}: ${errors} errors, ${warnings} warnings`);
  }
  console.log(`openapi lint: ${counts.join("; ")}`);
  if (failed) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
  await server.close();
}
