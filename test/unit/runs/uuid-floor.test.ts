// uuidv7Floor: the bound orphan-slice removal compares run ids with (src/runs/content-store.ts).
import { expect, test } from "bun:test";
import { uuidv7 } from "../../../src/lib/uuid.ts";
import { uuidv7Floor } from "../../../src/runs/content-store.ts";

test("ids made before a millisecond sort below its floor; ids made at or after it, not", async () => {
  const before = uuidv7();
  await Bun.sleep(2);
  const cut = Date.now();
  await Bun.sleep(2);
  const after = uuidv7();
  expect(before < uuidv7Floor(cut)).toBe(true);
  expect(after < uuidv7Floor(cut)).toBe(false);
  expect(uuidv7Floor(0)).toBe("00000000-0000-7000-0000-000000000000");
  expect(uuidv7Floor(0x0190f0a0dead)).toBe("0190f0a0-dead-7000-0000-000000000000");
});
