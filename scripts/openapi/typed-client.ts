// `npm run check:client`: proves that the OpenAPI document makes a working typed client. In a
// temp dir: openapi-typescript turns the document served by a real server into types, tsc
// (strict) compiles scripts/openapi/client/check.ts against them with openapi-fetch, and Node
// runs the result against that server. The check file may hold no cast: a document that needs
// one to be usable fails here.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startCheckServer } from "./server.ts";

const root = resolve(import.meta.dir, "../..");
const source = join(import.meta.dir, "client/check.ts");

/** Type assertions and escapes that would let a wrong document through. */
const ESCAPES = [/\bas\s+(?!const\b)[\w{[(]/, /[=(,:]\s*<\w+>\s*[\w(]/, /\bany\b/, /@ts-/, /!\./, /!\)/];
const code = readFileSync(source, "utf8")
  .replace(/\/\/.*$/gm, "")
  .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, '""');
const escapes = ESCAPES.filter((re) => re.test(code));
if (escapes.length) {
  console.error(`check:client: ${source} holds a cast or an escape: ${escapes.join(", ")}`);
  process.exit(1);
}

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}) {
  const p = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(" ")} failed (${p.exitCode}):\n${out}${err}`);
  return out;
}

const server = await startCheckServer();
const dir = mkdtempSync(join(tmpdir(), "assay-typed-client-"));
try {
  writeFileSync(join(dir, "openapi.json"), server.document);
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  copyFileSync(source, join(dir, "check.ts"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "ES2022",
        moduleResolution: "Bundler",
        lib: ["ES2022", "DOM"],
        types: ["node"],
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: true,
        outDir: "out",
      },
      files: ["check.ts", "schema.d.ts"],
    }),
  );
  const bin = (name: string) => join(root, "node_modules/.bin", name);
  await run([bin("openapi-typescript"), "openapi.json", "--output", "schema.d.ts"], dir);
  await run([bin("tsc"), "-p", "tsconfig.json"], dir);
  const out = await run(["node", "out/check.js"], dir, {
    ASSAY_URL: server.url,
    ASSAY_TOKEN: server.token,
    ASSAY_ORG: server.org,
  });
  process.stdout.write(out);
} finally {
  rmSync(dir, { recursive: true, force: true });
  await server.close();
}
