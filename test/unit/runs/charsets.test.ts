// Declared charsets (src/runs/intake/charsets.ts) and the text/plain-is-JSON test: pure functions
// intake and the workers share.
import { expect, test } from "bun:test";
import { charsetOf, decodeText, decodes, normaliseCharset } from "../../../src/runs/intake/charsets.ts";
import { classify } from "../../../src/runs/intake/filetypes.ts";

const bytes = (...b: number[]) => new Uint8Array(b);

test("us-ascii and iso-8859-1 labels are those charsets, not WHATWG's windows-1252", () => {
  for (const l of ["us-ascii", "US-ASCII", "ascii", "ansi_x3.4-1968"])
    expect(normaliseCharset(l)).toBe("us-ascii");
  for (const l of ["iso-8859-1", "ISO_8859-1:1987", "latin1", "l1", "cp819", "iso88591"])
    expect(normaliseCharset(l)).toBe("iso-8859-1");
  for (const l of ["windows-1252", "cp1252", "x-cp1252"]) expect(normaliseCharset(l)).toBe("windows-1252");
  expect(normaliseCharset("utf8")).toBe("utf-8");
  expect(normaliseCharset("utf-32")).toBeNull();
});

test("us-ascii is 7-bit; iso-8859-1 maps each byte to its code point", () => {
  expect(() => decodeText(bytes(0x63, 0x61, 0x66, 0xe9), "us-ascii")).toThrow();
  expect(decodes(bytes(0x63, 0x61, 0x66, 0xe9), "us-ascii")).toBe(false);
  expect(decodeText(bytes(0x63, 0x61, 0x66), "us-ascii")).toBe("caf");
  expect(decodeText(bytes(0x80, 0xe9, 0x9f), "iso-8859-1")).toBe("\u0080\u00e9\u009f");
  expect(decodeText(bytes(0x80), "windows-1252")).toBe("€");
});

test("a plain utf-16 label lets the BOM decide, big-endian without one (RFC 2781 §4.3)", () => {
  expect(charsetOf("utf-16", bytes(0xfe, 0xff, 0, 0x41))).toBe("utf-16be");
  expect(charsetOf("UTF-16", bytes(0xff, 0xfe, 0x41, 0))).toBe("utf-16le");
  expect(charsetOf("utf-16", bytes(0, 0x41))).toBe("utf-16be");
  expect(charsetOf("utf-16le", bytes(0xfe, 0xff))).toBe("utf-16le");
  expect(charsetOf("latin1", bytes())).toBe("iso-8859-1");
  expect(decodeText(bytes(0xfe, 0xff, 0, 0x7b, 0, 0x7d), "utf-16be")).toBe("{}");
});

test("text is JSON only between JSON whitespace: U+00A0, U+2028, VT, FF are text", () => {
  expect(classify("TEXT", ' \t\r\n{"a":1}\n ')).toBe("JSON");
  expect(classify("TEXT", "[1]")).toBe("JSON");
  for (const ws of ["\u00a0", "\u2028", "\u000b", "\u000c", "\u3000"]) {
    expect(classify("TEXT", `${ws}{"a":1}`)).toBe("TEXT");
    expect(classify("TEXT", `{"a":1}${ws}`)).toBe("TEXT");
  }
  expect(classify("TEXT", "{")).toBe("TEXT");
  expect(classify("TEXT", "  ")).toBe("TEXT");
  expect(classify("TEXT", '"{}"')).toBe("TEXT");
});
