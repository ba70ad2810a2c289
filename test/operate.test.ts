// Operating the built binary (issue 22): one server per port and per data dir, an init that
// writes everything or nothing, and a start log that says what to do next.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, ensureBinary, serveBinary } from "./helpers/binary.ts";

const dir = mkdtempSync(join(tmpdir(), "assay-operate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(dir, `d${++n}`);

/** Runs the binary to its end (bounded); stdin optional. */
async function assay(args: string[], stdin?: string) {
  const p = Bun.spawn([BINARY, ...args], {
    env: { ...process.env, ASSAY_LOG_LEVEL: "warn" },
    stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => p.kill("SIGKILL"), 60_000);
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  clearTimeout(timer);
  return { code, out, err };
}

beforeAll(() => {
  ensureBinary();
}, 300_000);

describe("one server per port and per data dir", () => {
  test("a second server on a port in use exits 1 at once, naming the port", async () => {
    const first = await serveBinary(BINARY, freshDir());
    try {
      const port = new URL(first.url).port;
      const second = await assay(["serve", "--port", port, "--data-dir", freshDir()]);
      expect(second.code).toBe(1);
      expect(second.err).toBe(
        `assay serve: port ${port} on 127.0.0.1 is in use by another process; stop it or choose another --port\n`,
      );
      expect(second.out).not.toContain("listening");
      // The first one still answers, alone.
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    } finally {
      first.proc.kill("SIGTERM");
      await first.proc.exited;
    }
  });

  test("a second server on a data dir in use exits 1 at once, naming the dir and the holder's PID", async () => {
    const data = freshDir();
    const first = await serveBinary(BINARY, data);
    try {
      const second = await assay(["serve", "--port", "0", "--data-dir", data]);
      expect(second.code).toBe(1);
      expect(second.err).toBe(
        `assay serve: the data directory ${data} is in use by another Assay server (PID ${first.proc.pid}); stop it or choose another --data-dir\n`,
      );
      // The admin commands keep working beside it (they do not take the server's lock).
      const users = await assay(["users", "list", "--data-dir", data]);
      expect(users.code).toBe(0);
      expect(users.out).toBe("(none)\n");
    } finally {
      first.proc.kill("SIGTERM");
      await first.proc.exited;
    }
    // Released on exit: the next server starts.
    const again = await serveBinary(BINARY, data);
    again.proc.kill("SIGTERM");
    expect(await again.proc.exited).toBe(0);
  });

  test("a lock left by a killed server is no lock: the next start succeeds", async () => {
    const data = freshDir();
    const first = await serveBinary(BINARY, data);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    expect(existsSync(join(data, "server.pid"))).toBe(true); // what a crash leaves behind
    const next = await serveBinary(BINARY, data);
    next.proc.kill("SIGTERM");
    expect(await next.proc.exited).toBe(0);
    expect(existsSync(join(data, "server.pid"))).toBe(false);
  });

  test("the start log prints the address, the one-time setup code and the next step", async () => {
    const data = freshDir();
    const p = Bun.spawn([BINARY, "serve", "--port", "0", "--data-dir", data, "--log-level", "warn"], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = p.stdout.getReader();
    let out = "";
    while (!/assay init .*\n/.test(out)) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    p.kill("SIGTERM");
    await p.exited;
    expect(out).toMatch(
      new RegExp(
        `^Assay \\S+ listening on http://127\\.0\\.0\\.1:\\d+ \\(data: SQLite in ${data}\\)\\n` +
          "No user yet\\. Next: open the address above in a browser and create the first administrator\\n" +
          "and organization with the one-time setup code [A-Z2-9]{4}-[A-Z2-9]{4}\\n" +
          `\\(or on this machine: assay init --org SLUG --admin USERNAME --password-stdin --data-dir ${data}\\)\\.\\n`,
      ),
    );
  });
});

describe("assay init writes everything or nothing", () => {
  test("a refused password leaves no data dir; the retry with the same slug succeeds", async () => {
    const data = freshDir();
    const bad = await assay(
      ["init", "--org", "acme", "--admin", "root", "--password-stdin", "--data-dir", data],
      "short\n",
    );
    expect(bad.code).toBe(1);
    expect(bad.err).toBe(
      "assay init: The first administrator and organization cannot be created.\n  password: A password has 8 to 1024 characters.\n",
    );
    expect(existsSync(data)).toBe(false);
    const good = await assay(
      ["init", "--org", "acme", "--admin", "root", "--password-stdin", "--data-dir", data],
      "correct horse battery\n",
    );
    expect(good.code).toBe(0);
    expect(good.out.trim().split("\n").at(-1)).toMatch(/^assay_/);
  });

  test("every problem is reported at once, and an empty dir given stays empty", async () => {
    const data = freshDir();
    mkdirSync(data);
    const r = await assay(
      ["init", "--org", "Bad Slug", "--admin", "bad name", "--password-stdin", "--data-dir", data],
      "x",
    );
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      [
        "assay init: The first administrator and organization cannot be created.",
        "  org_slug: An org slug is 1 to 63 characters: lowercase letters, digits and -, starting with a letter.",
        "  username: A username is 1 to 64 characters: letters, digits, . _ @ -, starting with a letter or digit.",
        "  password: A password has 8 to 1024 characters.",
        "",
      ].join("\n"),
    );
    expect(readdirSync(data)).toEqual([]);
  });

  test("a deleted org keeps its slug, and both commands say why", async () => {
    const data = freshDir();
    expect((await assay(["init", "--org", "acme", "--admin", "root", "--data-dir", data])).code).toBe(0);
    expect((await assay(["orgs", "create", "beta", "--data-dir", data])).code).toBe(0);
    const del = await assay(["orgs", "delete", "beta", "--data-dir", data]);
    expect(del.out).toBe(
      `Organization beta: deleted (SQLite in ${data}). Its runs and history are kept and the slug stays reserved; \`assay orgs restore beta\` brings it back.\n`,
    );
    const again = await assay(["orgs", "create", "beta", "--data-dir", data]);
    expect(again.code).toBe(1);
    expect(again.err).toBe(
      'assay orgs: The organization slug "beta" is taken by a deleted organization; restore it with `assay orgs restore beta`, or choose another slug.\n',
    );
  });
});

describe("the data dir's files are readable by their owner only", () => {
  // They hold password and token hashes, webhook secrets and submitted content, like a backup
  // (0600). SQLite created them 0644 less the umask: in a data dir the operator made (mkdir,
  // systemd's StateDirectory=, both 0755) every local user could read them.
  const modes = (data: string) =>
    Object.fromEntries(readdirSync(data).map((f) => [f, (statSync(join(data, f)).mode & 0o777).toString(8)]));

  test("in a 0755 dir made beforehand: init, then a server with its WAL, lock and PID file", async () => {
    const data = freshDir();
    mkdirSync(data);
    chmodSync(data, 0o755);
    const init = await assay(["init", "--org", "acme", "--admin", "root", "--data-dir", data]);
    expect(init.code).toBe(0);
    expect(modes(data)).toEqual({ "assay.db": "600" });
    const token = init.out.trim().split("\n").at(-1)!;
    const { proc, url } = await serveBinary(BINARY, data);
    try {
      // A write, so that the WAL holds something while the server runs.
      const r = await fetch(`${url}/api/v1/orgs/acme/`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Acme" }),
      });
      expect(r.status).toBe(200);
      const running = modes(data);
      expect(Object.keys(running)).toEqual(
        expect.arrayContaining(["assay.db-wal", "assay.db-shm", "server.lock"]),
      );
      expect(Object.entries(running).filter(([, m]) => m !== "600")).toEqual([]);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    expect(Object.entries(modes(data)).filter(([, m]) => m !== "600")).toEqual([]);
  }, 120_000);

  test("migrate and a server on a new data dir inside a 0755 dir", async () => {
    const data = freshDir();
    mkdirSync(data);
    chmodSync(data, 0o755);
    expect((await assay(["migrate", "--data-dir", data])).code).toBe(0);
    expect(modes(data)).toEqual({ "assay.db": "600" });
    const fresh = join(data, "inner");
    const { proc } = await serveBinary(BINARY, fresh);
    proc.kill("SIGTERM");
    await proc.exited;
    expect((statSync(fresh).mode & 0o777).toString(8)).toBe("700");
    expect(Object.entries(modes(fresh)).filter(([, m]) => m !== "600")).toEqual([]);
  }, 120_000);
});
