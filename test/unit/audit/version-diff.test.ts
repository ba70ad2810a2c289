// The field-by-field diff of two workflow versions (src/workflows/diff.ts).
import { describe, expect, test } from "bun:test";
import { MAX_CHANGES, diffVersions } from "../../../src/workflows/diff.ts";
import type { StepDef, WorkflowVersion } from "../../../src/workflows/types.ts";

const step = (id: number, order: number, config: Record<string, unknown> = {}, name = `s${id}`): StepDef => ({
  id,
  order,
  name,
  validator: "json_schema",
  is_active: true,
  config,
});
const version = (n: number, steps: StepDef[], extra: Partial<WorkflowVersion> = {}): WorkflowVersion => ({
  workflow_id: 1,
  version: n,
  slug: "orders",
  name: "Orders",
  description: "",
  status: "active",
  retention_days: null,
  allowed_file_types: ["JSON"],
  fail_fast: true,
  steps,
  ...extra,
});

describe("diffVersions", () => {
  test("equal versions: no change", () => {
    const v = version(1, [step(1, 1, { schema: { type: "object" } })]);
    expect(diffVersions(v, { ...v, version: 2 })).toEqual({ changes: [], truncated: false, unrecorded: [] });
  });
  test("settings compared whole; config leaves by JSON Pointer; steps by id", () => {
    const a = version(1, [
      step(1, 1, { schema: { required: ["id", "total"], "a/b": 1 } }),
      step(2, 2, {}, "gone"),
    ]);
    const b = version(2, [step(3, 1, {}, "new"), step(1, 2, { schema: { required: ["id"], "a/b": 2 } })], {
      name: "Orders v2",
      allowed_file_types: ["JSON", "YAML"],
    });
    const { changes } = diffVersions(a, b);
    expect(changes).toEqual([
      { path: "/name", op: "changed", before: "Orders", after: "Orders v2", step: null },
      { path: "/allowed_file_types", op: "changed", before: ["JSON"], after: ["JSON", "YAML"], step: null },
      {
        path: "/steps/3",
        op: "added",
        after: { order: 1, name: "new", validator: "json_schema", is_active: true, config: {} },
        step: { id: 3, name: "new" },
      },
      { path: "/steps/1/order", op: "changed", before: 1, after: 2, step: { id: 1, name: "s1" } },
      {
        path: "/steps/1/config/schema/required/1",
        op: "removed",
        before: "total",
        step: { id: 1, name: "s1" },
      },
      {
        path: "/steps/1/config/schema/a~1b",
        op: "changed",
        before: 1,
        after: 2,
        step: { id: 1, name: "s1" },
      },
      {
        path: "/steps/2",
        op: "removed",
        before: { order: 2, name: "gone", validator: "json_schema", is_active: true, config: {} },
        step: { id: 2, name: "gone" },
      },
    ]);
  });
  test("settings a version did not record are named, not compared", () => {
    const old = version(1, []);
    for (const k of ["name", "description", "status", "retention_days"] as const) delete old[k];
    const d = diffVersions(old, version(2, [], { name: "Renamed" }));
    expect(d.changes).toEqual([]);
    expect(d.unrecorded).toEqual(["name", "description", "status", "retention_days"]);
  });
  test("at most MAX_CHANGES changes, then truncated", () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`k${i}`, n]));
    const d = diffVersions(version(1, [step(1, 1, many(1))]), version(2, [step(1, 1, many(2))]));
    expect(d.changes.length).toBe(MAX_CHANGES);
    expect(d.truncated).toBe(true);
  });
  test("keys named like Object's own members are keys like any other", () => {
    const plain = { schema: { properties: { id: { type: "string" } } } };
    const withCtor = { schema: { properties: { id: { type: "string" }, constructor: { type: "string" } } } };
    const added = diffVersions(version(1, [step(1, 1, plain)]), version(2, [step(1, 1, withCtor)]));
    expect(added.changes).toEqual([
      {
        path: "/steps/1/config/schema/properties/constructor",
        op: "added",
        after: { type: "string" },
        step: { id: 1, name: "s1" },
      },
    ]);
    const removed = diffVersions(version(2, [step(1, 1, withCtor)]), version(3, [step(1, 1, plain)]));
    expect(removed.changes.map((c) => [c.op, c.before])).toEqual([["removed", { type: "string" }]]);
  });
  test("each node of a config is read once, however deep (a deep schema held the event loop)", () => {
    // Counts reads through a proxy at every level: comparing whole subtrees at each level read
    // the innermost nodes once per level above them (depth² reads); a single walk reads ~depth.
    let reads = 0;
    const counted = (o: Record<string, unknown>): Record<string, unknown> =>
      new Proxy(o, {
        get(t, k, r) {
          if (typeof k === "string" && Object.hasOwn(t, k)) reads++;
          return Reflect.get(t, k, r);
        },
      });
    const nest = (depth: number, leaf: string) => {
      let node: Record<string, unknown> = counted({ title: leaf });
      for (let i = 0; i < depth; i++) node = counted({ not: node });
      return node;
    };
    const depth = 200;
    const d = diffVersions(
      version(1, [step(1, 1, { schema: nest(depth, "v1") })]),
      version(2, [step(1, 1, { schema: nest(depth, "v2") })]),
    );
    expect(d.changes.map((c) => c.op)).toEqual(["changed"]);
    expect(d.changes[0]!.path).toBe(`/steps/1/config/schema${"/not".repeat(depth)}/title`);
    expect(reads).toBeLessThan(4 * (depth + 1) * 2);
  });
  test("stops walking once the list is full", () => {
    let reads = 0;
    const wide = (n: number) =>
      new Proxy(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, n])), {
        get(t, k, r) {
          if (typeof k === "string" && Object.hasOwn(t, k)) reads++;
          return Reflect.get(t, k, r);
        },
      });
    const d = diffVersions(version(1, [step(1, 1, wide(1))]), version(2, [step(1, 1, wide(2))]));
    expect(d.truncated).toBe(true);
    expect(reads).toBeLessThan(2 * 2 * (MAX_CHANGES + 2));
  });
});
