// Strict base64 (RFC 4648 §4, standard alphabet, optional padding; whitespace between lines
// tolerated because MIME encoders wrap at 76 columns). Anything else is a 400, not a best guess:
// that includes bits after the last byte that are not zero (`YR==` is not `YQ==`, though both
// would give "a"), which RFC 4648 §3.5 lets a decoder reject and no encoder produces.
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

export function decodeBase64(input: string): Uint8Array | null {
  const s = input.replace(/[\r\n\t ]+/g, "");
  if (s.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null;
  if (s.includes("=") && s.length % 4 !== 0) return null;
  const data = s.replace(/=+$/, "");
  // The last character of 2 (3) characters in a group carries 4 (2) bits past the last byte.
  const spare = data.length % 4 === 2 ? 0x0f : data.length % 4 === 3 ? 0x03 : 0;
  if (spare && ALPHABET.indexOf(data[data.length - 1]!) & spare) return null;
  return new Uint8Array(Buffer.from(s, "base64"));
}
