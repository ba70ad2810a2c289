// A webhook URL is one line of text as a name is (docs/limits.md): no C1 control, bidirectional
// override or isolate, or unpaired surrogate (spaces, C0 and line separators were refused
// already). They were stored: a lone surrogate as U+FFFD (not the URL sent), an override as is,
// so the URL the admin pages showed read otherwise than the one called. A URL in any script, and
// its path's characters, stay.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type TestServer, call, errorBody, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const base = "/api/v1/orgs/acme/webhooks/";
beforeAll(async () => {
  s = await startTestServer({ webhook_allow_private: true });
});
afterAll(() => s.close());

const send = (url: string) =>
  call(s, "POST", base, { token: s.rootToken, body: { url, events: ["run.completed"] } });

test("400 for a C1 control, a bidirectional control or a lone surrogate; nothing stored", async () => {
  const expected = errorBody(400, "invalid_request", "The webhook is invalid.", [
    {
      field: "url",
      code: "invalid",
      message:
        "The URL may not contain control characters, line separators, bidirectional overrides or isolates, or unpaired surrogates.",
    },
  ]);
  for (const tail of ["\u0085", "\u009b", "\u202e", "\u2066x\u2069", "\ud800", "a\udfff"]) {
    const before = await s.count("webhooks");
    const r = await send(`http://127.0.0.1/hook/${tail}`);
    expect(r.json).toEqual(expected);
    expect(r.status).toBe(400);
    expect(await s.count("webhooks")).toBe(before);
  }
});

test("letters of any script, an emoji and a right-to-left mark in the path are kept as sent", async () => {
  const url = "http://127.0.0.1/pfad/ü/é\u0301/😀/\u05d0\u200f?q=ä";
  const r = await send(url);
  expect(r.status).toBe(201);
  expect(r.json.url).toBe(url);
});
