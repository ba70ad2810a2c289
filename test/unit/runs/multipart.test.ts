// The multipart/form-data parser's header parameters (src/runs/intake/multipart.ts): read as
// RFC 9110 says, and what other parsers could read differently refused — a regex over the whole
// header found `filename=` inside another parameter's quoted value, and kept the first of two.
import { describe, expect, test } from "bun:test";
import { boundaryOf, parameters, parseMultipart } from "../../../src/runs/intake/multipart.ts";

const body = (...heads: string[]) =>
  new TextEncoder().encode(`--b\r\n${heads.join("\r\n")}\r\n\r\n{}\r\n--b--\r\n`);
const parse = (...heads: string[]) => parseMultipart(body(...heads), "b");
const refusal = (...heads: string[]) => {
  try {
    parse(...heads);
  } catch (e) {
    return (e as Error).message;
  }
  return "parsed";
};

describe("multipart header parameters", () => {
  test("tokens, quoted strings with escapes, any case and spacing, a trailing ';'", () => {
    expect([...parameters(' ; Name = "a \\"b\\" ; c" ;filename=x.json;  ', 0)]).toEqual([
      ["name", 'a "b" ; c'],
      ["filename", "x.json"],
    ]);
    const [p] = parse('Content-Disposition: form-data; name="file"; filename="résumé; a=b.json"');
    expect([p!.name, p!.filename]).toEqual(["file", "résumé; a=b.json"]);
  });

  test("a parameter inside another's quoted value is part of that value, not a parameter", () => {
    const [p] = parse('Content-Disposition: form-data; name="file; filename=evil.json"');
    expect([p!.name, p!.filename]).toEqual(["file; filename=evil.json", null]);
  });

  test("what parsers may read differently is refused", () => {
    expect(refusal('Content-Disposition: form-data; name="a"; name="b"')).toBe(
      "the header parameter name is given twice",
    );
    expect(refusal("Content-Disposition: form-data; name=file; filename=a b.json")).toBe(
      'unexpected "b" in a header\'s parameters',
    );
    expect(refusal('Content-Disposition: form-data; name="file; filename=x')).toBe(
      "the header parameter name has an unterminated quote",
    );
    expect(refusal("Content-Disposition: form-data; name=")).toBe("the header parameter name has no value");
    expect(refusal("Content-Disposition: form-data; =x")).toBe("a header parameter without a name");
    expect(
      refusal('Content-Disposition: form-data; name="a"', 'Content-Disposition: form-data; name="b"'),
    ).toBe("a part with two content-disposition headers");
    expect(
      refusal(
        'Content-Disposition: form-data; name="a"',
        "Content-Type: text/plain",
        "content-type: text/csv",
      ),
    ).toBe("a part with two content-type headers");
    expect(refusal('Content-Disposition: form-datax; name="a"')).toBe(
      "a part without Content-Disposition: form-data",
    );
    expect(refusal("Content-Disposition: form-data")).toBe("a part without a name");
  });

  test("the boundary: quoted or not, among other parameters; missing, twice or too long refused", () => {
    expect(boundaryOf('multipart/form-data; charset=utf-8; BOUNDARY="a b"')).toBe("a b");
    expect(boundaryOf("multipart/form-data;boundary=xyz")).toBe("xyz");
    for (const bad of [
      "multipart/form-data",
      "multipart/form-data; charset=utf-8",
      "multipart/form-data; boundary=a; boundary=b",
      `multipart/form-data; boundary=${"x".repeat(71)}`,
    ])
      expect(() => boundaryOf(bad)).toThrow();
  });
});
