// `assay serve` restarts itself in place with the allocator's hole purging off
// (src/lib/allocator.ts): same PID, same arguments, the environment plus one variable, and an
// operator's own setting kept. Read from /proc, so Linux only, like the tuning itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, realpathSync } from "node:fs";
import { basename, join } from "node:path";
import { VALUE, VARIABLE, nulSeparated } from "../src/lib/allocator.ts";
import { BINARY, ROOT, ensureBinary } from "./helpers/binary.ts";
import { removeTestTempDirs, testTempDir } from "./helpers/temp.ts";

const linux = process.platform === "linux";
let dir = "";
let n = 0;
beforeAll(() => {
  dir = testTempDir("allocator");
  if (linux) ensureBinary();
}, 300_000);
afterAll(() => removeTestTempDirs());

/** Starts `args` (a serve command line), waits for its banner, returns what /proc says of it. */
async function started(args: string[], env: Record<string, string | undefined>) {
  const clean: Record<string, string | undefined> = { ...process.env, ASSAY_LOG_LEVEL: "warn", ...env };
  for (const k of Object.keys(clean)) if (clean[k] === undefined) delete clean[k];
  const p = Bun.spawn(args, { env: clean, stdout: "pipe", stderr: "pipe" });
  try {
    const reader = p.stdout.getReader();
    let out = "";
    while (!/listening on (http:\/\/\S+)/.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`serve exited: ${out} ${await new Response(p.stderr).text()}`);
      out += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
    const health = (await fetch(`${url}/healthz`)).status;
    const text = (b: Buffer[]) => b.map((x) => x.toString("utf8"));
    const environ = text(nulSeparated(readFileSync(`/proc/${p.pid}/environ`)));
    const cmdline = text(nulSeparated(readFileSync(`/proc/${p.pid}/cmdline`)));
    const comm = readFileSync(`/proc/${p.pid}/comm`, "utf8").trim();
    return { health, environ, cmdline, comm };
  } finally {
    p.kill("SIGTERM");
    await p.exited;
  }
}

const serveArgs = () => ["serve", "--port", "0", "--data-dir", join(dir, `d${++n}`)];
const tuning = (environ: string[]) => environ.filter((e) => e.startsWith(`${VARIABLE}=`));

describe("nulSeparated", () => {
  test("splits /proc's NUL-terminated lists into their bytes, keeping empty and spaced entries", () => {
    const split = (b: Buffer) => nulSeparated(b).map((x) => [...x]);
    expect(split(Buffer.from("a\0b c\0\0d=é\0"))).toEqual([[97], [98, 32, 99], [], [100, 61, 0xc3, 0xa9]]);
    // Not UTF-8 (a Latin-1 file name): the bytes as they are, for execve to pass on unchanged.
    expect(split(Buffer.from([0x2f, 0xe9, 0, 0x78, 0]))).toEqual([[0x2f, 0xe9], [0x78]]);
    expect(split(Buffer.from("no-terminator"))).toEqual([[...Buffer.from("no-terminator")]]);
    expect(nulSeparated(Buffer.from(""))).toEqual([]);
  });
});

describe.if(linux)("assay serve tunes the allocator in place", () => {
  for (const [name, command] of [
    ["the binary", () => [BINARY]],
    ["the source", () => [process.execPath, join(ROOT, "src/main.ts")]],
  ] as const) {
    test(`${name}: same PID and arguments, the setting added to the environment`, async () => {
      const args = [...command(), ...serveArgs()];
      const r = await started(args, { [VARIABLE]: undefined, ASSAY_TEST_MARK: "kept" });
      expect(r.health).toBe(200);
      // The PID Bun.spawn returned is the server's: the process replaced itself, nothing wraps it.
      expect(tuning(r.environ)).toEqual([`${VARIABLE}=${VALUE}`]);
      expect(r.environ).toContain("ASSAY_TEST_MARK=kept");
      expect(r.cmdline).toEqual(args);
      // Named after its executable as before (what ps and pgrep show), not after /proc/self/exe.
      expect(r.comm).toBe(basename(realpathSync(args[0]!)).slice(0, 15));
    });
  }

  test("an operator's own setting is kept, whatever its value", async () => {
    for (const value of ["1", ""]) {
      const r = await started([BINARY, ...serveArgs()], { [VARIABLE]: value });
      expect(r.health).toBe(200);
      expect(tuning(r.environ)).toEqual([`${VARIABLE}=${value}`]);
    }
  });
});
