// cel-go's strings extension as @bufbuild/cel ships it (charAt, indexOf, lastIndexOf, lowerAscii,
// upperAscii, replace, split, substring, trim, join, format, strings.quote), plus reverse() from
// cel-go's later versions, and cel-go's base64 encoders. What they build is charged and bounded by
// the wrapper in env.ts. split(sep, n) is replaced: the engine's used JavaScript's limit, which
// drops the rest ('a,b,c'.split(',', 2) gave ['a', 'b']); Go's strings.SplitN keeps it in the last.
import { type CelFunc, CelScalar, celFunc, celMethod, listType } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { fail } from "../errors.ts";

/** Go's strings.SplitN: n < 0 all parts, 0 none, else at most n with the rest in the last. */
function splitN(s: string, sep: string, n: bigint): string[] {
  if (n === 0n) return [];
  const parts = sep === "" ? [...s] : s.split(sep);
  if (n < 0n || BigInt(parts.length) <= n) return parts;
  const head = parts.slice(0, Number(n) - 1);
  return [...head, parts.slice(Number(n) - 1).join(sep)];
}

export const stringsExt: CelFunc[] = [
  ...strings,
  celMethod(
    "split",
    CelScalar.STRING,
    [CelScalar.STRING, CelScalar.INT],
    listType(CelScalar.STRING),
    function (this: string, sep: string, n: bigint) {
      return splitN(this, sep, n);
    },
  ),
  celMethod("reverse", CelScalar.STRING, [], CelScalar.STRING, function (this: string) {
    return [...this].reverse().join("");
  }),
];

/** cel-go ext/encoders: standard base64, padding optional when decoding. */
export const encodersExt: CelFunc[] = [
  celFunc("base64.encode", [CelScalar.BYTES], CelScalar.STRING, (b: Uint8Array) =>
    Buffer.from(b).toString("base64"),
  ),
  celFunc("base64.decode", [CelScalar.STRING], CelScalar.BYTES, (s: string) => {
    if (
      !/^[A-Za-z0-9+/]*={0,2}$/.test(s) ||
      s.replace(/=+$/, "").length % 4 === 1 ||
      (s.includes("=") && s.length % 4 !== 0)
    )
      fail("base64.decode(): not valid base64");
    return new Uint8Array(Buffer.from(s, "base64"));
  }),
];
