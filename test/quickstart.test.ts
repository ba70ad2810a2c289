// The README's quick start as a new user runs it: a fresh clone, each command of its two blocks
// typed into one shell in order, and between them the browser step in Chromium (the setup form
// with the code from the server's output). It must end signed in and with a validated document.
// Heavy (a clone, `npm install`, a build): runs when ASSAY_QUICKSTART=1, as `.ci/run` sets.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./helpers/binary.ts";
import { hasChromium, launch, newPage } from "./browser/browser.ts";

const enabled = process.env.ASSAY_QUICKSTART === "1" && hasChromium;
const dir = mkdtempSync(join(tmpdir(), "assay-quickstart-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The commands of README block `n`, as a shell reads them: comment and blank lines between
 * commands dropped, a command ends on the first line where it is complete (`bash -n` accepts it),
 * so continuations and multi-line quotes stay whole.
 */
export function quickstartCommands(readme: string, n: number): string[] {
  const block = new RegExp(
    `<!-- quickstart:${n} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\`\\n<!-- /quickstart -->`,
  ).exec(readme);
  if (!block) throw new Error(`README has no quickstart block ${n}`);
  const out: string[] = [];
  let cur = "";
  for (const line of block[1]!.split("\n")) {
    if (!cur && (!line.trim() || line.trim().startsWith("#"))) continue;
    cur += cur ? `\n${line}` : line;
    if (!line.endsWith("\\") && Bun.spawnSync(["bash", "-n", "-c", cur]).exitCode === 0) {
      out.push(cur);
      cur = "";
    }
  }
  if (cur) throw new Error(`README quickstart block ${n} ends inside a command: ${cur}`);
  return out;
}

/** One interactive bash: each command runs in it after the last one ended, like typing. */
function shell(cwd: string, env: Record<string, string>) {
  const p = Bun.spawn(["bash", "--noprofile", "--norc"], {
    cwd,
    env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const decoder = new TextDecoder();
  for (const stream of [p.stdout, p.stderr])
    void (async () => {
      const reader = stream.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        out += decoder.decode(value);
      }
    })();
  let n = 0;
  return {
    output: () => out,
    async run(command: string, timeoutMs = 600_000): Promise<{ status: number; output: string }> {
      const mark = `__quickstart_${++n}__`;
      const from = out.length;
      p.stdin.write(`${command}\necho "${mark} $?"\n`);
      p.stdin.flush();
      const deadline = Date.now() + timeoutMs;
      const re = new RegExp(`${mark} (\\d+)`);
      while (!re.test(out.slice(from))) {
        if (Date.now() > deadline) throw new Error(`"${command}" did not end: ${out.slice(from)}`);
        await Bun.sleep(50);
      }
      const text = out.slice(from);
      return { status: Number(re.exec(text)![1]), output: text.slice(0, text.search(re)) };
    },
    async waitFor(re: RegExp, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      while (!re.test(out)) {
        if (Date.now() > deadline) throw new Error(`no ${re} in: ${out}`);
        await Bun.sleep(50);
      }
      return re.exec(out)!;
    },
    end: () => {
      p.stdin.write("kill %1 2>/dev/null; wait; exit\n");
      p.stdin.end();
      return p.exited;
    },
  };
}

test.skipIf(!enabled)(
  "the README's quick start from a fresh clone ends signed in, with a validated document",
  async () => {
    const clone = join(dir, "assay");
    expect(Bun.spawnSync(["git", "clone", "--quiet", ROOT, clone]).exitCode).toBe(0);
    const readme = readFileSync(join(clone, "README.md"), "utf8");
    // The README says 8080; this machine may have it taken: the same commands on a free port.
    const probe = Bun.serve({ port: 0, fetch: () => new Response() });
    const port = String(probe.port);
    probe.stop(true);
    const local = (c: string) => c.replaceAll("127.0.0.1:8080", `127.0.0.1:${port}`);
    const { ASSAY_SERVER: _s, ASSAY_TOKEN: _t, ASSAY_DATA_DIR: _d, ...env } = process.env;
    const sh = shell(clone, {
      ...(env as Record<string, string>),
      ASSAY_PORT: port,
      // npm install from the local cache when it has the packages: the same command, less network.
      npm_config_prefer_offline: "true",
    });
    try {
      for (const c of quickstartCommands(readme, 1)) {
        const r = await sh.run(local(c));
        expect({ command: c, status: r.status }).toEqual({ command: c, status: 0 });
      }
      const [, url, code] = await sh.waitFor(
        /listening on (http:\/\/\S+)[\s\S]*setup code ([A-Z2-9]{4}-[A-Z2-9]{4})/,
      );

      // The browser step of the README: the setup form, then signed in.
      const browser = await launch();
      try {
        const page = await newPage(browser, url!);
        await page.goto("/");
        await page.getByLabel("Setup code").fill(code!);
        await page.getByLabel("Administrator username").fill("me");
        await page.getByLabel("Password (8 characters or more)").fill("my long password");
        await page.getByLabel("Organization slug (lowercase letters, digits, -)").fill("acme");
        await page.getByRole("button", { name: "Create and sign in" }).click();
        await page.locator("header.top").waitFor();
        expect(
          await page.evaluate(async () => (await (await fetch("/api/v1/users/me/")).json()).username),
        ).toBe("me");
      } finally {
        await browser.close();
      }

      const commands = quickstartCommands(readme, 2);
      const results = [];
      for (const c of commands) results.push(await sh.run(local(c)));
      // Every command but the last succeeds; the last validates and reports the failed rule.
      expect(results.slice(0, -1).map((r) => r.status)).toEqual(commands.slice(0, -1).map(() => 0));
      expect(results[commands.findIndex((c) => c.includes("/runs/"))]!.output).toContain('"status":"failed"');
      const last = results.at(-1)!;
      expect(last.status).toBe(1);
      expect(last.output).toMatch(/^order\.json:1:8 error json_schema\.type /m);
    } finally {
      await sh.end();
    }
  },
  900_000,
);
