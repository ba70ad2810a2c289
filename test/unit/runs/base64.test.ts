// Strict base64 (src/runs/intake/base64.ts): every mode's content_encoding / Content-Encoding.
import { expect, test } from "bun:test";
import { decodeBase64 } from "../../../src/runs/intake/base64.ts";

const bytes = (...b: number[]) => new Uint8Array(b);

test("base64 refuses bits past the last byte that are not zero (RFC 4648 §3.5)", () => {
  expect(decodeBase64("YR==")).toBeNull();
  expect(decodeBase64("YR")).toBeNull();
  expect(decodeBase64("YWJ=")).toBeNull();
  expect(decodeBase64("YQ==")).toEqual(bytes(0x61));
  expect(decodeBase64("YQ")).toEqual(bytes(0x61));
  expect(decodeBase64("YWI=")).toEqual(bytes(0x61, 0x62));
  expect(decodeBase64("YWJj\r\nZA==")).toEqual(bytes(0x61, 0x62, 0x63, 0x64));
});
