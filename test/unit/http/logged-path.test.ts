// loggedPath (src/http/request-log.ts): a token or webhook secret pasted into a URL's path is
// masked whole in log lines. A webhook secret is standard base64 (`+`, `/`, `=`): about half of
// them hold a `/`, which a path splits on, and a client may percent-encode it.
import { expect, test } from "bun:test";
import { loggedPath } from "../../../src/http/request-log.ts";
import { newSecret } from "../../../src/webhooks/signing.ts";

// A fixed secret with a `/` 3 characters after the prefix and another one later on.
const SLASHED = "whsec_ab/cDEFGHIJKLMNOPQRSTUVWXYZ012345+/6789abc=";

test("a webhook secret holding a / is masked whole, not only up to its first /", () => {
  expect(loggedPath(`/${SLASHED}`)).toBe("/whsec_***");
  expect(loggedPath(`/api/v1/x/${SLASHED}`)).toBe("/api/v1/x/whsec_***");
});

test("a percent-encoded webhook secret is masked whole", () => {
  expect(loggedPath(`/${encodeURIComponent(SLASHED)}`)).toBe("/whsec_***");
});

test("no character of a generated secret survives, whatever it holds", () => {
  for (let i = 0; i < 200; i++) {
    const s = newSecret();
    for (const path of [`/${s}`, `/a/${s}/b`, `/${encodeURIComponent(s)}`]) {
      const out = loggedPath(path);
      expect(out).toContain("whsec_***");
      expect(out).not.toContain(s.slice(6, 14));
      expect(out).not.toContain(s.slice(-8));
    }
  }
});

test("an API token is masked and the path around it kept; short or plain paths are unchanged", () => {
  const token = `assay_${"A1b2-C3d4_".repeat(5)}`;
  expect(loggedPath(`/api/v1/users/me/tokens/${token}/`)).toBe("/api/v1/users/me/tokens/assay_***/");
  expect(loggedPath("/api/v1/orgs/my_org/workflows/")).toBe("/api/v1/orgs/my_org/workflows/");
  expect(loggedPath("/whsec_short/")).toBe("/whsec_short/");
});
