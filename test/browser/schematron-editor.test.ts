// The schematron step editor in real Chromium: the phase selector is filled from the schema's own
// sch:phase elements as it is typed, and the chosen phase is what the server saves. A schema that
// does not parse yet (empty, half typed) costs no CSP violation: the phases were read with
// DOMParser, whose parsererror element carries an inline style the page's CSP refuses (two console
// errors per keystroke until 2026-11-30).
import { SYSTEM } from "../../src/audit/actor.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type TestServer, call, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, newPage, screenshot, signIn } from "./browser.ts";

const PASSWORD = "root password 1";
const SCHEMA = `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">
  <sch:phase id="lines"><sch:active pattern="p-lines"/></sch:phase>
  <sch:phase id="totals"><sch:active pattern="p-total"/></sch:phase>
  <sch:pattern id="p-lines"><sch:rule context="line"><sch:assert id="Q" test="@qty > 0">qty</sch:assert></sch:rule></sch:pattern>
  <sch:pattern id="p-total"><sch:rule context="order"><sch:assert id="T" test="@total">total</sch:assert></sch:rule></sch:pattern>
</sch:schema>`;

describe.skipIf(!hasChromium)("schematron step editor in Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer();
    const root = await s.deps.users.getByUsername("root");
    await s.deps.users.setPassword(root!.id, await Bun.password.hash(PASSWORD), SYSTEM);
    browser = await launch();
    page = await newPage(browser, s.url);
    await signIn(page, "root", PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  test("the phase selector lists the schema's phases; the chosen one is saved", async () => {
    await page.goto("/app/orgs/acme/workflows/");
    await page.getByRole("link", { name: "New workflow" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Invoices");
    // A schematron step reads XML: a workflow of JSON only would refuse every run (a 400 on save).
    await page.getByLabel("JSON", { exact: true }).uncheck();
    await page.getByLabel("XML", { exact: true }).check();
    await page.getByRole("button", { name: "Add step" }).click();
    await page.getByLabel("Step name").fill("Business rules");
    await page.getByLabel("Validator").selectOption("schematron");
    const phase = page.getByLabel("Phase");
    const options = () =>
      phase.locator("option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(await options()).toEqual(["", "#ALL"]);
    await page.getByLabel("Schematron schema").fill(SCHEMA);
    expect(await options()).toEqual(["", "#ALL", "lines", "totals"]);
    await phase.selectOption("totals");
    await screenshot(page, "schematron-step");
    await page.getByRole("button", { name: "Create workflow" }).click();
    await page.waitForURL(/\/app\/orgs\/acme\/workflows\/invoices\/$/);
    const wf = await call(s, "GET", "/api/v1/orgs/acme/workflows/invoices/", { token: s.rootToken });
    expect(wf.json.steps[0].validator).toBe("schematron");
    expect(wf.json.steps[0].config).toEqual({ schema: SCHEMA, phase: "totals" });
  });

  test("an empty or half-typed schema logs no CSP violation, and its finished phases are listed", async () => {
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.goto("/app/orgs/acme/new-workflow");
    await page.getByRole("button", { name: "Add step" }).click();
    await page.getByLabel("Validator").selectOption("schematron");
    const schema = page.getByLabel("Schematron schema");
    await schema.waitFor();
    // Half the schema, typed key by key: every prefix of it is not well-formed.
    const half = SCHEMA.slice(0, SCHEMA.indexOf('<sch:phase id="totals"'));
    await schema.pressSequentially(half.slice(0, 120));
    await schema.fill(half);
    await schema.press("End");
    expect(errors).toEqual([]);
    const options = await page
      .getByLabel("Phase")
      .locator("option")
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(options).toEqual(["", "#ALL", "lines"]);
  });
});
