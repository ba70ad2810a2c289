// Who is offered "Cancel run" on a run still going: as the API decides, its creator (whatever
// their role now, a Viewer too) or an Author; not an Executor who did not start it, nor a Viewer.
// A creator demoted to Viewer was not offered it, though the API lets them cancel.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import type { Role } from "../../src/orgs/store.ts";
import { type Gate, HOLD_WORKFLOW } from "../helpers/gates.ts";
import { createWorkflow } from "../helpers/fixtures.ts";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, newPage, setPassword, signIn } from "./browser.ts";

const PASSWORD = "member password 1";

describe.skipIf(!hasChromium)("Cancel run on a run's page, by role (Chromium)", () => {
  let s: TestServer;
  let browser: Browser;
  let gate: Gate;
  let runId = "";

  beforeAll(async () => {
    s = await startTestServer();
    await createWorkflow(s, s.rootToken, HOLD_WORKFLOW);
    const users: [string, Role][] = [
      ["cleo", "executor"],
      ["exa", "executor"],
      ["vic", "viewer"],
      ["ada", "author"],
    ];
    const tokens = new Map<string, string>();
    for (const [name, role] of users) {
      tokens.set(name, (await s.user(name, "acme", role)).token);
      await setPassword(s, name, PASSWORD);
    }
    gate = s.gates.gate();
    const held = await call(s, "POST", "/api/v1/orgs/acme/workflows/hold/runs/", {
      token: tokens.get("cleo"),
      raw: gate.doc(),
      headers: { "content-type": "application/json", prefer: "respond-async" },
    });
    expect(held.status).toBe(202);
    runId = held.json.id;
    await gate.held();
    // Cleo started the run; she is a Viewer now.
    const demoted = await call(s, "PATCH", "/api/v1/orgs/acme/members/cleo/", {
      token: s.rootToken,
      body: { role: "viewer" },
    });
    expect(demoted.status).toBe(200);
    browser = await launch();
  });
  afterAll(async () => {
    s?.gates.openAll();
    await browser?.close();
    await s?.close();
  });

  async function offered(username: string): Promise<boolean> {
    const page = await newPage(browser, s.url);
    try {
      await signIn(page, username, PASSWORD);
      await page.goto(`/app/orgs/acme/runs/${runId}/`);
      await page.getByRole("heading", { name: `Run ${runId.slice(-8)}`, level: 1 }).waitFor();
      return (await page.getByRole("button", { name: "Cancel run" }).count()) === 1;
    } finally {
      await page.context().close();
    }
  }

  test("not offered to an Executor who did not start it, nor to a Viewer; offered to an Author", async () => {
    expect({
      exa: await offered("exa"),
      vic: await offered("vic"),
      ada: await offered("ada"),
    }).toEqual({ exa: false, vic: false, ada: true });
  });

  test("offered to its creator, now a Viewer, and the cancel is made", async () => {
    const page = await newPage(browser, s.url);
    await signIn(page, "cleo", PASSWORD);
    await page.goto(`/app/orgs/acme/runs/${runId}/`);
    await page.getByRole("button", { name: "Cancel run" }).click();
    await page.getByRole("status").filter({ hasText: "Finished: canceled." }).waitFor();
    const run = await call(s, "GET", `/api/v1/orgs/acme/runs/${runId}/`, { token: s.rootToken });
    expect(run.json.status).toBe("canceled");
    await page.context().close();
  });
});
