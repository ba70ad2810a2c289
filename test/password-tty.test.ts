// `--password-stdin` at a terminal (README's quick start: `assay init … --password-stdin`): the
// command asks, reads one line without echo and ends at Enter. It read to the end of input as
// from a pipe: no prompt, the password shown as typed, and nothing until Ctrl-D. A pseudo-terminal
// from util-linux's `script` stands in for the operator's terminal.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MAIN } from "./helpers/cli.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

const hasScript = Bun.spawnSync(["sh", "-c", "command -v script"]).exitCode === 0;
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const shellQuote = (a: string) => `'${a.replaceAll("'", `'\\''`)}'`;

test.skipIf(!hasScript)(
  "users set-password --password-stdin at a terminal: a prompt, no echo, Enter ends it, backspace takes back a character",
  async () => {
    const command = [
      process.execPath,
      MAIN,
      "users",
      "set-password",
      "root",
      "--password-stdin",
      ...s.cliArgs,
    ]
      .map(shellQuote)
      .join(" ");
    const p = Bun.spawn(["script", "-qec", command, "/dev/null"], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, ASSAY_DATABASE_URL: undefined, ASSAY_DATA_DIR: undefined },
    });
    try {
      await typeAtPrompt(p);
    } finally {
      p.kill(); // gone already when it passed; on a failure, no command left waiting for input
    }
  },
  60_000,
);

async function typeAtPrompt(p: Bun.Subprocess<"pipe", "pipe", "pipe">) {
  const decoder = new TextDecoder();
  let seen = "";
  const reader = p.stdout.getReader();
  // Typed only once the prompt is there, as a person would: the terminal echoes what arrives
  // before the command has turned echo off.
  while (!seen.includes("Password (not shown): ")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`no prompt; the command wrote: ${seen}`);
    seen += decoder.decode(value, { stream: true });
  }
  // "pässword-9", a backspace, "12": the password is "pässword-12".
  p.stdin.write("pässword-9\x7f12\r");
  await p.stdin.end();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
  }
  expect(await p.exited).toBe(0);
  expect(seen).not.toContain("pässword");
  expect(seen).toContain("Password set for root");
  const login = (password: string) =>
    call(s, "POST", "/api/v1/auth/login/", { body: { username: "root", password } });
  expect((await login("pässword-12")).status).toBe(200);
  expect((await login("pässword-912")).status).toBe(401);
}
