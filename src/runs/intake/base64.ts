// Strict base64 (RFC 4648 §4, standard alphabet, optional padding; whitespace between lines
// tolerated because MIME encoders wrap at 76 columns). Anything else is a 400, not a best guess.
export function decodeBase64(input: string): Uint8Array | null {
  const s = input.replace(/[\r\n\t ]+/g, "");
  if (s.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null;
  if (s.includes("=") && s.length % 4 !== 0) return null;
  return new Uint8Array(Buffer.from(s, "base64"));
}
