// The audit log's serializations (src/audit/chain.ts) and what an entry records of a change
// (src/audit/changes.ts): pure functions, checked against fixed values so that a change of the
// rules cannot pass unnoticed (entries already written would stop verifying).
import { describe, expect, test } from "bun:test";
import { GENESIS, canonicalJson, hashOf, serialize } from "../../../src/audit/chain.ts";
import { changesText, diffRecords, redact } from "../../../src/audit/changes.ts";

const entry = {
  seq: 7,
  prev_hash: GENESIS,
  created_at: "2026-11-24T10:00:00.000Z",
  org_id: 1,
  actor_type: "user" as const,
  actor_user_id: 2,
  actor_username: "ann",
  token_id: 3,
  session_id: null,
  client_ip: "127.0.0.1",
  action: "workflow.update",
  target_type: "workflow",
  target_id: "5",
  target_name: "orders",
  changes: '{"after":{"name":"B"},"before":{"name":"A"}}',
};

describe("canonical JSON", () => {
  test("keys sorted at every level, no whitespace, undefined left out", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: "é" }], c: true }, u: undefined })).toBe(
      '{"a":{"c":true,"d":[3,{"y":"é","z":null}]},"b":1}',
    );
  });
  test("keys sort by UTF-16 code units (uppercase before lowercase), as JavaScript sorts", () => {
    expect(canonicalJson({ b: 1, B: 2, "10": 3, "9": 4 })).toBe('{"10":3,"9":4,"B":2,"b":1}');
  });
  test("strings escaped as JSON.stringify does", () => {
    expect(canonicalJson({ s: 'a"\\\n\u0001' })).toBe('{"s":"a\\"\\\\\\n\\u0001"}');
  });
});

describe("entry hash", () => {
  test("the serialization is the fixed array of rule 2", () => {
    expect(serialize(entry)).toBe(
      '["assay-audit/1",7,"0000000000000000000000000000000000000000000000000000000000000000","2026-11-24T10:00:00.000Z",1,"user",2,"ann",3,null,"127.0.0.1","workflow.update","workflow","5","orders","{\\"after\\":{\\"name\\":\\"B\\"},\\"before\\":{\\"name\\":\\"A\\"}}"]',
    );
  });
  test("the hash is the SHA-256 of that text, in hex", () => {
    const expected = new Bun.CryptoHasher("sha256").update(serialize(entry)).digest("hex");
    expect(hashOf(entry)).toBe(expected);
    expect(hashOf(entry)).toMatch(/^[0-9a-f]{64}$/);
  });
  test("every field counts: changing any one changes the hash", () => {
    const base = hashOf(entry);
    for (const [k, v] of Object.entries(entry)) {
      const other = typeof v === "number" ? v + 1 : v === null ? "x" : `${v}x`;
      expect({ k, same: hashOf({ ...entry, [k]: other }) === base }).toEqual({ k, same: false });
    }
  });
});

describe("what a change records", () => {
  test("an update keeps only what differs, nested records (steps by id) entry by entry", () => {
    const d = diffRecords(
      { name: "A", version: 1, steps: { "1": { name: "s", order: 1 }, "2": { name: "t", order: 2 } } },
      { name: "A", version: 2, steps: { "1": { name: "s", order: 2 }, "3": { name: "u", order: 1 } } },
    );
    expect(d).toEqual({
      before: { version: 1, steps: { "1": { order: 1 }, "2": { name: "t", order: 2 } } },
      after: { version: 2, steps: { "1": { order: 2 }, "3": { name: "u", order: 1 } } },
    });
  });
  test("secrets are removed whatever a write path hands over", () => {
    expect(
      redact({ name: "x", secret: "whsec_1", password_hash: "$argon", digest: "ab", csrf: "c" }),
    ).toEqual({
      name: "x",
    });
    const text = changesText({
      action: "webhook.create",
      org_id: 1,
      target_type: "webhook",
      target_id: 1,
      after: { url: "https://e.example/", secret: "whsec_leak", previous_secret: "whsec_old" },
      context: { token: "assay_leak" },
    })!;
    expect(text).toBe('{"after":{"url":"https://e.example/"}}');
  });
  test("no change recorded: null", () => {
    expect(changesText({ action: "x", org_id: null, target_type: "t", target_id: null })).toBeNull();
  });
});
