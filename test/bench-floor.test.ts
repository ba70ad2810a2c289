// The benchmark's floor (scripts/bench/floor-server.ts) stands for the least work a sync run
// needs: it must really do that work — refuse a wrong token, store the submission and the run
// before its 201, answer with a run shaped like Assay's — or its ratio flatters the stack.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WORKFLOWS, orderDocument } from "../scripts/bench/fixtures.ts";
import { createWorkflow } from "./helpers/fixtures.ts";
import { type TestServer, startTestServer } from "./helpers/server.ts";

const TOKEN = "floor-test-token";
let assay: TestServer;
let floor: { url: string; proc: Bun.Subprocess<"ignore", "pipe", "inherit">; dir: string };

/** The object's shape: every key path, with the JSON type at its end. */
function shape(v: unknown, at = ""): string[] {
  if (Array.isArray(v)) return [`${at}[]`, ...v.flatMap((x) => shape(x, `${at}[]`))];
  if (v !== null && typeof v === "object")
    return Object.entries(v).flatMap(([k, x]) => [`${at}.${k}`, ...shape(x, `${at}.${k}`)]);
  return [`${at}:${v === null ? "null" : typeof v}`];
}

beforeAll(async () => {
  assay = await startTestServer();
  await createWorkflow(assay, assay.rootToken, WORKFLOWS.order);
  const dir = mkdtempSync(join(tmpdir(), "assay-floor-"));
  const proc = Bun.spawn([process.execPath, "scripts/bench/floor-server.ts", join(dir, "data")], {
    env: { ...process.env, FLOOR_TOKEN: TOKEN },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the floor server exited: ${text}`);
    text += new TextDecoder().decode(value);
    const m = /listening on (\S+)/.exec(text);
    if (m) {
      floor = { url: m[1]!, proc, dir };
      break;
    }
  }
  reader.releaseLock();
});
afterAll(async () => {
  floor?.proc.kill("SIGTERM");
  await floor?.proc.exited;
  if (floor) rmSync(floor.dir, { recursive: true, force: true });
  await assay?.close();
});

const post = (url: string, token: string) =>
  fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: orderDocument(),
  });

describe("the bench's floor server", () => {
  test("answers a valid document 201 with a run shaped like Assay's, stored before the answer", async () => {
    const f = await post(`${floor.url}/`, TOKEN);
    expect(f.status).toBe(201);
    const fromFloor = await f.json();
    const a = await post(
      `${assay.url}/api/v1/orgs/acme/workflows/${WORKFLOWS.order.slug}/runs/`,
      assay.rootToken,
    );
    expect(a.status).toBe(201);
    const fromAssay = await a.json();
    expect(new Set(shape(fromFloor))).toEqual(new Set(shape(fromAssay)));
    expect(fromFloor.status).toBe("succeeded");
    expect(fromFloor.submission.sha256).toBe(fromAssay.submission.sha256);

    const db = new Database(join(floor.dir, "data", "assay.db"), { readonly: true });
    try {
      const row = db
        .query<{ status: string; content: Uint8Array }, [string]>(
          "SELECT r.status, s.content FROM runs r JOIN submissions s ON s.id = r.submission_id WHERE r.id = ?",
        )
        .get(fromFloor.id);
      expect(row?.status).toBe("succeeded");
      expect(new TextDecoder().decode(row!.content)).toBe(orderDocument());
    } finally {
      db.close();
    }
  });

  test("refuses a wrong token with 401 and stores nothing", async () => {
    const db = new Database(join(floor.dir, "data", "assay.db"), { readonly: true });
    const runs = () => db.query<{ n: number }, []>("SELECT count(*) AS n FROM runs").get()!.n;
    try {
      const before = runs();
      const r = await post(`${floor.url}/`, `${TOKEN}x`);
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ code: "authentication_required" });
      expect(runs()).toBe(before);
    } finally {
      db.close();
    }
  });
});
