// Who an `assay` command acts as in the audit log: the account of its user id, whatever $USER says.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { nameOfUid } from "../../../src/audit/actor.ts";

describe("the CLI's actor", () => {
  test("a user id's name from the password database", () => {
    const passwd = "root:x:0:0:root:/root:/bin/bash\n# comment\nci:x:1000:1000::/home/ci:/bin/sh\n";
    expect(nameOfUid(0, passwd)).toBe("root");
    expect(nameOfUid(1000, passwd)).toBe("ci");
    expect(nameOfUid(10, passwd)).toBeNull();
    expect(nameOfUid(0, "")).toBeNull();
  });

  test("without $USER, or with a false one, the account is still the process's own", () => {
    const expected = Bun.spawnSync(["id", "-un"]).stdout.toString().trim();
    const script = `import { cliActor } from ${JSON.stringify(join(import.meta.dir, "../../../src/audit/actor.ts"))}; console.log(cliActor().username);`;
    for (const USER of [undefined, "mallory"]) {
      const { USER: _, ...env } = process.env;
      const p = Bun.spawnSync([process.execPath, "-e", script], { env: USER ? { ...env, USER } : env });
      expect({ USER, name: p.stdout.toString().trim() }).toEqual({ USER, name: expected });
    }
  });
});
