// Two tabs of one browser share the session cookie. A sign-in in one tab makes a new session and
// CSRF token; the other tab's next write used to fail with "CSRF check failed" until reloaded. It
// now takes the new session's token when the session is still the same user's — and never acts
// as another user someone signed in as meanwhile.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type TestServer, startTestServer } from "../helpers/server.ts";
import { hasChromium, launch, setPassword, signIn } from "./browser.ts";

const PASSWORD = "root password 1";

describe.skipIf(!hasChromium)("two tabs, one session cookie", () => {
  let s: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let a: Page;
  let b: Page;

  beforeAll(async () => {
    s = await startTestServer();
    await setPassword(s, "root", PASSWORD);
    await s.user("vera", "acme", "viewer");
    await setPassword(s, "vera", "vera password");
    browser = await launch();
    context = await browser.newContext({ baseURL: s.url });
    a = await context.newPage();
    b = await context.newPage();
    await signIn(a, "root", PASSWORD);
    await b.goto("/app/settings/tokens/");
    await b.getByRole("heading", { name: "API tokens", level: 1 }).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  // A sign-in in tab A through the API the app uses: a new session replaces the cookie.
  const signInIn = (page: Page, username: string, password: string) =>
    page.evaluate(
      async ({ username, password }) =>
        (
          await fetch("/api/v1/auth/login/", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ username, password }),
          })
        ).status,
      { username, password },
    );

  const createToken = async (name: string) => {
    await b.getByRole("button", { name: "Create token" }).click();
    const dialog = b.getByRole("dialog");
    await dialog.getByLabel("Name").fill(name);
    await dialog.getByRole("button", { name: "Create token" }).click();
  };
  const tokensOf = async (username: string) =>
    (
      await s.sql<{ name: string }>(
        "SELECT t.name FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE u.username = ? ORDER BY t.id",
        username,
      )
    ).map((r) => r.name);

  test("the same user signed in again in another tab: the write goes through", async () => {
    expect(await signInIn(a, "root", PASSWORD)).toBe(200);
    await createToken("after re-sign-in");
    await b.getByText("You will not see it again.").waitFor();
    expect(await tokensOf("root")).toContain("after re-sign-in");
  });

  test("another user signed in in another tab: the write is refused, nothing is done as them", async () => {
    await b.reload();
    await b.getByRole("heading", { name: "API tokens", level: 1 }).waitFor();
    expect(await signInIn(a, "vera", "vera password")).toBe(200);
    await createToken("meant for root");
    await b.getByText("CSRF check failed").waitFor();
    expect(await tokensOf("vera")).not.toContain("meant for root");
    expect(await tokensOf("root")).not.toContain("meant for root");
  });
});
