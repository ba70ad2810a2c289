// Workflows as code over the API with the built binary: `assay workflows apply ORG FILE --server
// URL --token T` creates, updates to match, and changes nothing when the file already matches;
// `export --server` writes what `export --data-dir` writes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { type AddressInfo, type Socket, createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { BINARY, ensureBinary, serveBinary } from "./helpers/binary.ts";

const dir = mkdtempSync(join(tmpdir(), "assay-apply-"));
const data = join(dir, "data");
let server: Awaited<ReturnType<typeof serveBinary>>;
let token = "";

async function assay(args: string[]) {
  const { ASSAY_SERVER: _s, ASSAY_TOKEN: _t, ...env } = process.env;
  const p = Bun.spawn([BINARY, ...args], { cwd: dir, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, out, err };
}
const api = () => ["--server", server.url, "--token", token];
const ORDERS = (name: string, max: number) => `kind: assay/workflow
version: 1
slug: orders
name: ${name}
allowed_file_types: [JSON]
steps:
  - name: schema
    validator: json_schema
    config:
      schema: { type: object, properties: { total: { type: number, maximum: ${max} } } }
`;

beforeAll(async () => {
  ensureBinary();
  const init = Bun.spawnSync([BINARY, "init", "--org", "acme", "--admin", "ci", "--data-dir", data]);
  token = init.stdout.toString().trim().split("\n").at(-1)!;
  server = await serveBinary(BINARY, data);
}, 300_000);
afterAll(async () => {
  server?.proc.kill("SIGTERM");
  await server?.proc.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe("assay workflows apply", () => {
  test("creates, then changes nothing when applied again", async () => {
    writeFileSync(join(dir, "orders.yaml"), ORDERS("Orders", 100));
    const first = await assay(["workflows", "apply", "acme", "orders.yaml", ...api()]);
    expect(first).toEqual({ code: 0, out: "acme/orders: created (version 1)\n", err: "" });
    const second = await assay(["workflows", "apply", "acme", "orders.yaml", ...api()]);
    expect(second).toEqual({ code: 0, out: "acme/orders: unchanged (version 1)\n", err: "" });
  });

  test("updates what differs and says what it was", async () => {
    writeFileSync(join(dir, "orders.yaml"), ORDERS("Orders v2", 500));
    const r = await assay(["workflows", "apply", "acme", "orders.yaml", ...api()]);
    expect(r).toEqual({
      code: 0,
      out: "acme/orders: updated to version 2 (name, steps[0].config)\n",
      err: "",
    });
    expect((await assay(["workflows", "apply", "acme", "orders.yaml", ...api()])).out).toBe(
      "acme/orders: unchanged (version 2)\n",
    );
  });

  test("export over the API writes what export on the data dir writes, and applies as unchanged", async () => {
    const remote = await assay(["workflows", "export", "acme", "orders", ...api()]);
    const local = await assay(["workflows", "export", "acme", "orders", "--data-dir", data]);
    expect(remote.code).toBe(0);
    expect(remote.out).toBe(local.out);
    expect(remote.out).toContain("name: Orders v2");
    writeFileSync(join(dir, "exported.yaml"), remote.out);
    expect((await assay(["workflows", "apply", "acme", "exported.yaml", ...api()])).out).toBe(
      "acme/orders: unchanged (version 2)\n",
    );
  });

  test("a server that accepts the connection and never answers: exit 1 at --timeout", async () => {
    const sockets: Socket[] = [];
    const silent = createNetServer((c) => sockets.push(c));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      // Without a deadline of its own the command waited for as long as the server held it.
      const r = await assay([
        "workflows",
        "export",
        "acme",
        "orders",
        "--server",
        url,
        "--token",
        "t",
        "--timeout",
        "2",
      ]);
      expect(r).toEqual({
        code: 1,
        out: "",
        err: `assay workflows: ${url} did not answer within 2 s (--timeout): GET /orgs/acme/workflows/orders/\n`,
      });
    } finally {
      for (const c of sockets) c.destroy();
      silent.close();
    }
    const zero = await assay(["workflows", "export", "acme", "orders", ...api(), "--timeout", "0"]);
    expect(zero.code).toBe(2);
    expect(zero.err).toStartWith('assay workflows: --timeout "0" is not a number of seconds (1 or more)\n');
  });

  test("refusals: exit 1 with the server's error, exit 2 for bad arguments", async () => {
    const bad = await assay([
      "workflows",
      "apply",
      "acme",
      "orders.yaml",
      "--server",
      server.url,
      "--token",
      "assay_nope",
    ]);
    expect(bad).toEqual({ code: 1, out: "", err: "assay workflows: Invalid token. (HTTP 401)\n" });
    writeFileSync(
      join(dir, "broken.yaml"),
      "slug: broken\nname: B\nallowed_file_types: [JSON]\nsteps:\n  - {name: s, validator: nope}\n",
    );
    const invalid = await assay(["workflows", "apply", "acme", "broken.yaml", ...api()]);
    expect(invalid.code).toBe(1);
    expect(invalid.err).toBe(
      'assay workflows: The workflow definition is invalid. (HTTP 400)\n  steps[0].validator: Unknown validator "nope"; see GET /api/v1/validators/.\n',
    );
    // A misspelt key is refused before anything is sent, as the API would refuse it: never dropped.
    writeFileSync(
      join(dir, "typo.yaml"),
      "slug: orders\nname: O\nallowed_file_types: [JSON]\nfail_fats: false\n",
    );
    expect(await assay(["workflows", "apply", "acme", "typo.yaml", ...api()])).toEqual({
      code: 1,
      out: "",
      err: "assay workflows: typo.yaml: not a workflow definition\n  fail_fats: is not a known field\n",
    });
    const noServer = await assay(["workflows", "apply", "acme", "orders.yaml"]);
    expect(noServer.code).toBe(2);
    expect(noServer.err).toBe(
      'assay workflows: apply works over the API: give --server URL (or ASSAY_SERVER); on a data dir use import\nRun "assay workflows -h" for help.\n',
    );
  });
});
