// Tamper evidence (issue 24): rows of the log edited, deleted or rewritten directly in the
// database, and `assay audit verify` (a real process on the server's database) naming the first
// broken link with exit 1; `assay audit head` and --anchor for what the chain alone cannot show.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { INSERT_AUDIT, auditValues } from "../src/audit/append.ts";
import { hashOf } from "../src/audit/chain.ts";
import { toRow } from "../src/audit/store.ts";
import type { AuditRow } from "../src/audit/types.ts";
import { verifyChain } from "../src/audit/verify.ts";
import { openDb } from "../src/db/open.ts";
import { runAssay } from "./helpers/cli.ts";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;

/** `assay args…` on the server's database (helpers/cli.ts). */
const assay = (...args: string[]) => runAssay([...args, ...s.cliArgs]);
const rowAt = async (seq: number) =>
  toRow((await s.row<AuditRow>("SELECT * FROM audit_log WHERE seq = ?", seq))!);

beforeAll(async () => {
  s = await startTestServer();
  // Written at once, as concurrent requests: appenders take turns on the chain's head.
  const made = await Promise.all(
    ["one", "two", "three", "four", "five", "six"].map((slug) =>
      call(s, "POST", "/api/v1/orgs/acme/workflows/", {
        token: s.rootToken,
        body: { slug, name: slug, allowed_file_types: ["JSON"] },
      }),
    ),
  );
  expect(made.map((r) => r.status)).toEqual(Array(6).fill(201));
  const renamed = await Promise.all(
    ["one", "two", "three", "four", "five", "six"].flatMap((slug) =>
      [1, 2, 3].map((i) =>
        call(s, "PATCH", `/api/v1/orgs/acme/workflows/${slug}/`, {
          token: s.rootToken,
          body: { description: `${slug} ${i}` },
        }),
      ),
    ),
  );
  expect(renamed.map((r) => r.status)).toEqual(Array(18).fill(200));
});
afterAll(() => s.close());

describe("assay audit verify", () => {
  test("an intact log after concurrent writes: one line, exit 0, how many entries, the head", async () => {
    const n = await s.count("audit_log");
    const seqs = (await s.sql<{ seq: number }>("SELECT seq FROM audit_log ORDER BY seq")).map((r) =>
      Number(r.seq),
    );
    expect(seqs).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(await s.count("audit_log WHERE action = 'workflow.update'")).toBe(18);
    const r = await assay("audit", "verify");
    expect(r.code).toBe(0);
    const head = await rowAt(n);
    expect(r.out).toBe(
      `Intact: ${n} entries (1 to ${n}) follow each other and match their hashes; head ${n}:${head.hash}.\n`,
    );
  });

  test("a row edited in the database is named (its hash no longer matches); exit 1", async () => {
    const before = await rowAt(5);
    await s.sql("UPDATE audit_log SET target_name = ? WHERE seq = ?", "someone-else", 5);
    const r = await assay("audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toBe(
      "BROKEN at entry 5: entry 5 does not match its hash: it was changed.\n4 entries before it are intact.\n",
    );
    await s.sql("UPDATE audit_log SET target_name = ? WHERE seq = ?", before.target_name, 5);
    expect((await assay("audit", "verify")).code).toBe(0);
  });

  test("an edited row given a matching hash still breaks the link to the next entry", async () => {
    const e = await rowAt(5);
    const forged = { ...e, actor_username: "mallory" };
    const { hash: _, ...content } = forged;
    await s.sql(
      "UPDATE audit_log SET actor_username = ?, hash = ? WHERE seq = ?",
      "mallory",
      hashOf(content),
      5,
    );
    const r = await assay("audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toStartWith(
      "BROKEN at entry 6: entry 6 does not follow entry 5 (prev_hash differs): entry 5 was changed or replaced.",
    );
    await s.sql(
      "UPDATE audit_log SET actor_username = ?, hash = ? WHERE seq = ?",
      e.actor_username,
      e.hash,
      5,
    );
  });

  test("a deleted row is named as missing", async () => {
    const e = await rowAt(3);
    await s.sql("DELETE FROM audit_log WHERE seq = ?", 3);
    const r = await assay("audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toStartWith("BROKEN at entry 3: entry 3 is missing (deleted).");
    await s.sql(INSERT_AUDIT, ...auditValues(e));
    expect((await assay("audit", "verify")).code).toBe(0);
  });

  test("the newest entry deleted: the head names it", async () => {
    const n = await s.count("audit_log");
    const e = await rowAt(n);
    await s.sql("DELETE FROM audit_log WHERE seq = ?", n);
    const r = await assay("audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toStartWith(
      `BROKEN at entry ${n}: the log ends at entry ${n - 1} but its head names entry ${n}: entries were removed from the end, or the head was changed.`,
    );
    await s.sql(INSERT_AUDIT, ...auditValues(e));
  });

  /** Entries a and b trade places (their seqs swapped, rows otherwise as stored). */
  const swap = async (a: number, b: number) => {
    await s.sql("UPDATE audit_log SET seq = ? WHERE seq = ?", -1, a);
    await s.sql("UPDATE audit_log SET seq = ? WHERE seq = ?", a, b);
    await s.sql("UPDATE audit_log SET seq = ? WHERE seq = ?", b, -1);
  };

  test("two entries reordered: the first of them no longer matches its hash (seq is hashed)", async () => {
    await swap(3, 4);
    const r = await assay("audit", "verify");
    expect(r).toMatchObject({
      code: 1,
      out: "BROKEN at entry 3: entry 3 does not match its hash: it was changed.\n2 entries before it are intact.\n",
    });
    await swap(3, 4);
    expect((await assay("audit", "verify")).code).toBe(0);
  });

  test("an entry inserted in the middle, the later ones moved up: the inserted one breaks the link", async () => {
    const n = await s.count("audit_log");
    const rows = (await s.sql<AuditRow>("SELECT * FROM audit_log WHERE seq >= 4 ORDER BY seq DESC")).map(
      toRow,
    );
    for (const e of rows) await s.sql("UPDATE audit_log SET seq = ? WHERE seq = ?", e.seq + 1, e.seq);
    // A forged entry 4 whose own hash is right and which follows entry 3.
    const forged = { ...(await rowAt(5)), seq: 4, prev_hash: (await rowAt(3)).hash, target_name: "forged" };
    const { hash: _, ...content } = forged;
    await s.sql(INSERT_AUDIT, ...auditValues({ ...forged, hash: hashOf(content) }));
    const r = await assay("audit", "verify");
    expect(r).toMatchObject({
      code: 1,
      out: "BROKEN at entry 5: entry 5 does not match its hash: it was changed.\n4 entries before it are intact.\n",
    });
    await s.sql("DELETE FROM audit_log WHERE seq = ?", 4);
    for (const e of rows.reverse())
      await s.sql("UPDATE audit_log SET seq = ? WHERE seq = ?", e.seq, e.seq + 1);
    expect(await s.count("audit_log")).toBe(n);
    expect((await assay("audit", "verify")).code).toBe(0);
  });

  test("an entry appended after the head without moving it: named as inserted, not as removed", async () => {
    const n = await s.count("audit_log");
    const last = await rowAt(n);
    const forged = { ...last, seq: n + 1, prev_hash: last.hash, target_name: "forged" };
    const { hash: _, ...content } = forged;
    await s.sql(INSERT_AUDIT, ...auditValues({ ...forged, hash: hashOf(content) }));
    try {
      const r = await assay("audit", "verify");
      expect(r).toMatchObject({
        code: 1,
        out: `BROKEN at entry ${n + 1}: entry ${n + 1} follows the head (entry ${n}): it was inserted, or the head was changed.\n${n} entries before it are intact.\n`,
      });
    } finally {
      await s.sql("DELETE FROM audit_log WHERE seq = ?", n + 1);
    }
    expect((await assay("audit", "verify")).code).toBe(0);
  });
});

describe("the head, recorded elsewhere", () => {
  test("`assay audit head` prints what the API's head shows", async () => {
    const r = await assay("audit", "head");
    expect(r.code).toBe(0);
    const api = await call(s, "GET", "/api/v1/admin/audit/head/", { token: s.rootToken });
    expect(JSON.parse(r.out)).toEqual(api.json);
  });

  test("a rewrite from entry k on with fresh hashes passes the chain alone, but not the anchor", async () => {
    const printed = (await assay("audit", "head")).out;
    const head = JSON.parse(printed) as { seq: number; hash: string };
    const anchor = `${head.seq}:${head.hash}`;
    expect((await assay("audit", "verify", "--anchor", anchor)).out).toContain(
      `The anchor ${head.seq} is in the chain, unchanged.`,
    );
    // What `audit head` printed, pasted as it is (its help says "as `assay audit head` printed
    // it"; until 2026-11-29 only SEQ:HASH was taken, which `head` never prints).
    expect(await assay("audit", "verify", "--anchor", printed.trim())).toMatchObject({
      code: 0,
      err: "",
      out: expect.stringContaining(`The anchor ${head.seq} is in the chain, unchanged.`),
    });
    // Whoever can write the database can recompute every hash after the one they change.
    const rows = (await s.sql<AuditRow>("SELECT * FROM audit_log WHERE seq >= 4 ORDER BY seq")).map(toRow);
    let prev = (await rowAt(3)).hash;
    for (const e of rows) {
      const content = { ...e, prev_hash: prev, actor_username: e.seq === 4 ? "mallory" : e.actor_username };
      const { hash: _, ...c } = content;
      const hash = hashOf(c);
      await s.sql(
        "UPDATE audit_log SET actor_username = ?, prev_hash = ?, hash = ? WHERE seq = ?",
        content.actor_username,
        prev,
        hash,
        e.seq,
      );
      prev = hash;
    }
    await s.sql("UPDATE audit_head SET hash = ? WHERE id = 1", prev);
    expect((await assay("audit", "verify")).code).toBe(0); // what the chain does not prove (docs/audit.md)
    for (const given of [anchor, printed]) {
      const r = await assay("audit", "verify", "--anchor", given);
      expect(r.code).toBe(1);
      expect(r.out).toStartWith(
        `BROKEN at entry ${head.seq}: entry ${head.seq} is not the one recorded elsewhere`,
      );
    }
  });

  test("a malformed anchor is a usage error (exit 2)", async () => {
    for (const bad of ["12", '{"seq": 12}', `{"seq": "12", "hash": "${"a".repeat(64)}"}`, "[]", "{"]) {
      const r = await assay("audit", "verify", "--anchor", bad);
      expect(r.code).toBe(2);
      expect(r.err).toContain(
        '--anchor is SEQ:HASH or the JSON head `assay audit head` prints ({"seq", "hash", …})',
      );
    }
  });

  test("-h prints the command's help", async () => {
    const r = await assay("audit", "-h");
    expect(r.code).toBe(0);
    expect(r.out).toContain("assay audit verify [--anchor SEQ:HASH]");
    expect(r.out).toContain("--database-url URL");
  });
});

describe("verify while others write (a snapshot: the chain as it was when the check began)", () => {
  const main = join(import.meta.dir, "../src/main.ts");
  /** Another process's write, finished before this returns: between two of verify's chunks. */
  const inAnotherProcess = (args: string[]) => {
    const p = Bun.spawnSync([process.execPath, ...args], { stdout: "pipe", stderr: "pipe" });
    if (p.exitCode !== 0) throw new Error(`${args.join(" ")}: ${p.stderr.toString()}`);
  };
  const purgeScript = `
    import { openDb } from ${JSON.stringify(join(import.meta.dir, "../src/db/open.ts"))};
    import { purgeAudit } from ${JSON.stringify(join(import.meta.dir, "../src/audit/retention.ts"))};
    const db = await openDb(JSON.parse(process.argv[1]), { migrate: false });
    await purgeAudit(db, 1, new Date(Date.now() + 10 * 86400000));
    await db.close();`;

  async function verifyWith(afterChunk: (chunk: number) => void) {
    const db = await openDb({ data_dir: s.dataDir, database_url: s.databaseUrl }, { migrate: false });
    try {
      let chunk = 0;
      return await verifyChain(db, undefined, { chunk: 2, afterChunk: () => afterChunk(++chunk) });
    } finally {
      await db.close();
    }
  }

  test("entries appended between chunks: intact, up to the head it started from", async () => {
    const n = await s.count("audit_log");
    const head = await rowAt(n);
    let made = 0;
    const r = await verifyWith((chunk) => {
      if (chunk <= 2) inAnotherProcess([main, "orgs", "create", `late-${++made}`, ...s.cliArgs]);
    });
    expect(made).toBe(2);
    expect(r).toEqual({
      ok: true,
      checked: n,
      first: 1,
      head: { seq: n, hash: head.hash },
      broken: null,
      anchor: null,
    });
    expect(await s.count("audit_log")).toBe(n + 2);
  });

  test("a purge between chunks: intact, as the log was before it", async () => {
    const n = await s.count("audit_log");
    const head = await rowAt(n);
    const config = JSON.stringify({ data_dir: s.dataDir, database_url: s.databaseUrl });
    const r = await verifyWith((chunk) => {
      if (chunk === 1) inAnotherProcess(["-e", purgeScript, config]);
    });
    expect(r).toEqual({
      ok: true,
      checked: n,
      first: 1,
      head: { seq: n, hash: head.hash },
      broken: null,
      anchor: null,
    });
    expect(await s.count("audit_log")).toBeLessThan(n);
    // And after it, the purged log verifies from its floor.
    const after = await assay("audit", "verify");
    expect(after.code).toBe(0);
  });
});

describe("the whole log removed (last: it empties this server's log)", () => {
  test("an emptied log and head, on an instance with users made since the log began: exit 1", async () => {
    await s.sql("DELETE FROM audit_log");
    await s.sql("DELETE FROM audit_head");
    const r = await assay("audit", "verify");
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /^BROKEN at entry 1: the log is empty, but \d+ users and organizations were created since it began \(.+\), each with an entry: the log and its head were removed\.\n0 entries before it are intact\.\n$/,
    );
  });
});
