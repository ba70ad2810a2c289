// A worker loads each validator on first use (src/validators/loader.ts); it must offer exactly
// the registry's validators, as the same definitions.
import { describe, expect, test } from "bun:test";
import { LOADABLE, loadValidator } from "../../../src/validators/loader.ts";
import { VALIDATORS } from "../../../src/validators/registry.ts";

describe("validator loader", () => {
  test("loads every validator of the registry, and only those, as the same definition", async () => {
    expect([...LOADABLE].sort()).toEqual(VALIDATORS.map((v) => v.slug).sort());
    for (const v of VALIDATORS) expect(await loadValidator(v.slug)).toBe(v);
  });

  test("unknown slugs, prototype names included, are undefined", async () => {
    for (const slug of ["nope", "__proto__", "constructor", "toString", ""])
      expect(await loadValidator(slug)).toBeUndefined();
  });
});
