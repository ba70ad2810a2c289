// A server error shown next to its field reads as one sentence: a message that already names its
// field ("filename may not contain …") was prefixed with the field's name again ("filename
// filename may not contain …"); a bare one ("is required") still gets its subject.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { SYSTEM } from "../../src/audit/actor.ts";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, rootSignedIn } from "./browser.ts";

describe.skipIf(!hasChromium)("form errors in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer();
    const acme = await s.org("acme");
    await s.deps.workflows.create(
      acme,
      {
        slug: "notes",
        name: "Notes",
        allowed_file_types: ["TEXT"],
        steps: [{ name: "Lines", validator: "text_rules", config: { max_lines: 10 } }],
      },
      SYSTEM,
    );
    ({ browser, page } = await rootSignedIn(s, "root password 1"));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("a refused file name is shown once next to its field, the input kept", async () => {
    await page.goto("/app/orgs/acme/workflows/notes/run");
    await page.getByLabel("Paste content").check();
    await page.getByLabel("Content", { exact: true }).fill("hello\n");
    const filename = page.getByLabel("File name (optional)");
    await filename.fill("a/b.txt");
    await page.getByRole("button", { name: "Start run" }).click();
    const error = page.locator(".field:has([data-field=filename]) .field-error");
    await error.waitFor();
    expect(await error.textContent()).toBe(
      "✖ filename may not contain control characters (bidirectional ones too), line separators, unpaired surrogates or path separators.",
    );
    expect(await filename.getAttribute("aria-invalid")).toBe("true");
    expect(await filename.inputValue()).toBe("a/b.txt");
    expect(await page.getByLabel("Content", { exact: true }).inputValue()).toBe("hello\n");
    const runs = await fetch(`${s.url}/api/v1/orgs/acme/runs/`, {
      headers: { authorization: `Bearer ${s.rootToken}` },
    });
    expect((await runs.json()).count).toBe(0);
  });
});
