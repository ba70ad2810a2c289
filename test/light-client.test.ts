// The light CI client, dist/assay-validate.mjs (one JavaScript file), run by Node and by Bun
// against a server started from the built binary: the same output, format by format, and the
// same exit codes as `assay validate` of the binary.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { type AddressInfo, type Socket, createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { BINARY, LIGHT, ensureBinary, serveBinary } from "./helpers/binary.ts";
import { VERSION } from "../src/version.ts";

const dir = mkdtempSync(join(tmpdir(), "assay-light-"));
let server: Awaited<ReturnType<typeof serveBinary>>;
let token = "";
/** A port nothing listens on (Node's fetch refuses some well-known ports outright, 9 among them). */
let closedPort = 0;

/** Runs a client to its end; killed (exit 143) after `timeoutMs` if given. */
async function run(cmd: string[], args: string[], timeoutMs?: number) {
  const { ASSAY_SERVER: _s, ASSAY_TOKEN: _t, ...env } = process.env;
  const p = Bun.spawn([...cmd, ...args], {
    cwd: dir,
    env,
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    timeout: timeoutMs,
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  // The one difference allowed: how a message names the program.
  return { code, out: normalise(out), err: err.replace(/assay(-validate| validate)\b/g, "PROGRAM") };
}
/** What differs between two runs of the same file: ids, times, durations. */
const normalise = (s: string) =>
  s
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<id>")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .replace(/"duration_ms": ?\d+/g, '"duration_ms":0')
    .replace(/"id": ?\d+/g, '"id":0')
    .replace(/time="[\d.]+"/g, 'time="0"')
    .replace(/timestamp="[^"]*"/g, 'timestamp=""')
    .replace(/in \d+ ms/g, "in N ms");

const CLIENTS: [string, string[]][] = [
  ["assay validate (binary)", [BINARY, "validate"]],
  ["assay-validate.mjs on Node", ["node", LIGHT]],
  ["assay-validate.mjs on Bun", [process.execPath, LIGHT]],
];

beforeAll(async () => {
  ensureBinary();
  const data = join(dir, "data");
  const init = Bun.spawnSync([BINARY, "init", "--org", "acme", "--admin", "ci", "--data-dir", data]);
  token = init.stdout.toString().trim().split("\n").at(-1)!;
  server = await serveBinary(BINARY, data);
  const r = await fetch(`${server.url}/api/v1/orgs/acme/workflows/`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
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
    }),
  });
  expect(r.status).toBe(201);
  const probe = Bun.serve({ port: 0, fetch: () => new Response() });
  closedPort = probe.port!;
  probe.stop(true);
  writeFileSync(join(dir, "good.json"), '{"id": 1}\n');
  writeFileSync(join(dir, "bad.json"), '{\n  "id": "seven"\n}\n');
  writeFileSync(join(dir, "back\\slash.json"), '{"id": 2}\n');
}, 300_000);
afterAll(async () => {
  server?.proc.kill("SIGTERM");
  await server?.proc.exited;
  rmSync(dir, { recursive: true, force: true });
});

test("is one small file: far below the server binary", () => {
  expect(statSync(LIGHT).size).toBeLessThan(200 * 1024);
  expect(statSync(BINARY).size).toBeGreaterThan(50 * 1024 * 1024);
});

describe("same answers as assay validate", () => {
  const remote = () => ["--server", server.url, "--token", token, "--org", "acme", "--workflow", "orders"];
  const cases: [string, () => string[], number][] = [
    ["a passing file, text", () => ["good.json", ...remote()], 0],
    ["a failing file, text", () => ["bad.json", ...remote()], 1],
    ["both, json", () => ["good.json", "bad.json", ...remote(), "--format", "json"], 1],
    ["both, junit", () => ["good.json", "bad.json", ...remote(), "--format", "junit"], 1],
    ["both, sarif", () => ["good.json", "bad.json", ...remote(), "--format", "sarif"], 1],
    ["warnings may fail too", () => ["good.json", ...remote(), "--fail-on", "warning"], 0],
    ["a missing option", () => ["good.json", "--server", server.url, "--token", token, "--org", "acme"], 2],
    ["an unknown option", () => ["good.json", ...remote(), "--colour", "red"], 2],
    ["a file that does not exist", () => ["nope.json", ...remote()], 2],
    [
      "a bad token",
      () => ["good.json", ...remote().slice(0, 2), "--token", "assay_x", ...remote().slice(4)],
      2,
    ],
    // The Authorization header carries the token: a user:password could not be sent (Node refused
    // every request and printed it; Bun dropped it silently).
    [
      "a user:password in --server",
      () => [
        "good.json",
        "--server",
        server.url.replace("http://", "http://ci:s3cret@"),
        ...remote().slice(2),
      ],
      2,
    ],
    // On POSIX a backslash is part of a file's name: reported as typed, sent as a name the server takes.
    ["a file named with a backslash", () => ["back\\slash.json", ...remote()], 0],
    [
      "a server that is not there",
      () => ["good.json", "--server", `http://127.0.0.1:${closedPort}`, ...remote().slice(2)],
      2,
    ],
  ];
  for (const [label, args, code] of cases)
    test(`${label}: exit ${code}`, async () => {
      const results = [];
      for (const [, cmd] of CLIENTS) results.push(await run(cmd, args()));
      expect(results[0]!.code).toBe(code);
      for (const r of results.slice(1)) expect(r).toEqual(results[0]!);
    });
});

/** The options that send a file to the test server's `orders` workflow at `url`. */
const against = (url: string) => ["--server", url, "--token", token, "--org", "acme", "--workflow", "orders"];

test("a misspelt ASSAY_TOKEN or ASSAY_SERVER is named on stderr; the server's variables are not the light client's business", async () => {
  for (const [label, cmd] of CLIENTS) {
    const p = Bun.spawn([...cmd, "good.json", "--org", "acme", "--workflow", "orders"], {
      cwd: dir,
      env: { PATH: process.env.PATH, ASSAY_SERVER: server.url, ASSAY_TOKN: token, ASSAY_WORKERS: "2" },
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    });
    const [out, err, code] = await Promise.all([
      new Response(p.stdout).text(),
      new Response(p.stderr).text(),
      p.exited,
    ]);
    expect({ label, code, out, err: err.replace(/assay(-validate| validate)\b/g, "PROGRAM") }).toEqual({
      label,
      code: 2,
      out: "",
      err: 'PROGRAM: warning: ASSAY_TOKN names no setting and is ignored (did you mean ASSAY_TOKEN?)\nPROGRAM: --token (or ASSAY_TOKEN) is required\nRun "PROGRAM -h" for help.\n',
    });
  }
});

test("--version alone prints the version, with an argument after it is exit 2; -h names it", async () => {
  const light = (args: string[]) => run(["node", LIGHT], args);
  expect(await light(["--version"])).toEqual({ code: 0, out: `assay-validate ${VERSION}\n`, err: "" });
  expect(await light(["-v", "good.json"])).toEqual({
    code: 2,
    out: "",
    err: 'PROGRAM: unexpected argument "good.json"\nRun "PROGRAM -h" for help.\n',
  });
  expect((await light(["-h"])).out).toContain("\n  -v, --version ");
});

test("the secret of a user:password in --server is printed nowhere; a backslash name is reported as typed", async () => {
  for (const [label, cmd] of CLIENTS) {
    const creds = await run(cmd, [
      "good.json",
      ...against(server.url.replace("http://", "http://ci:s3cret@")),
    ]);
    expect({ label, code: creds.code, out: creds.out, secret: creds.err.includes("s3cret") }).toEqual({
      label,
      code: 2,
      out: "",
      secret: false,
    });
    expect(creds.err).toContain("carries a user:password");
    const named = await run(cmd, ["back\\slash.json", ...against(server.url)]);
    expect({ label, code: named.code, out: named.out }).toEqual({
      label,
      code: 0,
      out: "PASS back\\slash.json: succeeded (no findings)\n1 file: 1 passed, 0 failed.\n",
    });
  }
});

test("a reader that closes the pipe early: no stack trace, the exit code is the verdict's", async () => {
  for (const [label, cmd] of CLIENTS)
    for (const [file, code] of [
      ["good.json", 0],
      ["bad.json", 1],
    ] as const) {
      // bash's pipefail: the client's own exit status, though `true` has long closed the pipe.
      const p = Bun.spawn(
        ["bash", "-c", 'set -o pipefail; "$@" | true', "_", ...cmd, file, ...against(server.url)],
        { cwd: dir, stdout: "pipe", stderr: "pipe", stdin: "ignore" },
      );
      const [err, exit] = await Promise.all([new Response(p.stderr).text(), p.exited]);
      expect({ label, file, exit, err }).toEqual({ label, file, exit: code, err: "" });
    }
});

test("a server that accepts the connection and never answers: every client exits 2 at --timeout", async () => {
  const sockets: Socket[] = [];
  const silent = createNetServer((c) => sockets.push(c));
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  try {
    const args = ["good.json", "--server", url, "--token", token, "--org", "acme", "--workflow", "orders"];
    for (const [label, cmd] of CLIENTS) {
      // Killed after 30 s (exit 143): without a deadline of its own a request waited 300 s or more.
      const r = await run(cmd, [...args, "--timeout", "2"], 30_000);
      expect({ label, ...r }).toEqual({
        label,
        code: 2,
        out: `ERROR good.json: timeout: The server did not answer within 2 s (--timeout): POST ${url}/api/v1/orgs/acme/workflows/orders/runs/\n1 file: 0 passed, 0 failed, 1 error.\n`,
        err: "",
      });
    }
  } finally {
    for (const c of sockets) c.destroy();
    silent.close();
  }
}, 120_000);

test("--local needs the server binary's validators: the light client says so, exit 2", async () => {
  const r = await run(["node", LIGHT], ["--local", "--workflow-file", "w.yaml", "good.json"]);
  expect(r.code).toBe(2);
  expect(r.err).toBe(
    'PROGRAM: --local is not available in PROGRAM; use PROGRAM --local (the server binary)\nRun "PROGRAM -h" for help.\n',
  );
});
