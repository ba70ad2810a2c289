// A strict multipart/form-data parser (RFC 7578 / RFC 2046 §5.1). Bun's FormData parser reports
// every file part as application/octet-stream, losing the type a client declared for the part;
// this one keeps each part's headers and its bytes exactly as sent.

export interface Part {
  name: string;
  filename: string | null;
  contentType: string | null;
  body: Uint8Array;
}

export class MultipartError extends Error {}

const CRLF = [13, 10];
const MAX_PARTS = 32;
const MAX_HEADER_BYTES = 8192;

function indexOf(hay: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0];
  outer: for (
    let i = hay.indexOf(first!, from);
    i !== -1 && i <= hay.length - needle.length;
    i = hay.indexOf(first!, i + 1)
  ) {
    for (let j = 1; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function param(header: string, key: string): string | null {
  const m = new RegExp(`(?:^|;)\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, "i").exec(header);
  if (!m) return null;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? "");
}

export function boundaryOf(contentType: string): string {
  const b = param(contentType.slice(contentType.indexOf(";")), "boundary");
  if (!b || b.length > 70) throw new MultipartError("missing or invalid boundary");
  return b;
}

export function parseMultipart(body: Uint8Array, boundary: string): Part[] {
  const enc = new TextEncoder();
  const delimiter = enc.encode(`--${boundary}`);
  const dec = new TextDecoder("utf-8", { fatal: false });
  let at = indexOf(body, delimiter, 0);
  if (at !== 0 && (at < 2 || body[at - 2] !== CRLF[0] || body[at - 1] !== CRLF[1]))
    throw new MultipartError("no opening boundary");
  const parts: Part[] = [];
  const next = enc.encode(`\r\n--${boundary}`);
  for (;;) {
    at += delimiter.length;
    if (body[at] === 45 && body[at + 1] === 45) return parts; // "--": the close delimiter
    while (body[at] === 32 || body[at] === 9) at++; // transport padding
    if (body[at] !== 13 || body[at + 1] !== 10) throw new MultipartError("malformed boundary line");
    at += 2;
    const headEnd = indexOf(body, enc.encode("\r\n\r\n"), at);
    const emptyHead = body[at] === 13 && body[at + 1] === 10;
    if (!emptyHead && (headEnd === -1 || headEnd - at > MAX_HEADER_BYTES))
      throw new MultipartError("malformed part headers");
    const headers = emptyHead ? "" : dec.decode(body.subarray(at, headEnd));
    const bodyStart = emptyHead ? at + 2 : headEnd + 4;
    const end = indexOf(body, next, bodyStart);
    if (end === -1) throw new MultipartError("a part is not terminated by a boundary");
    let disposition = "";
    let contentType: string | null = null;
    for (const line of headers.split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon < 1) throw new MultipartError("malformed part header");
      const key = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (key === "content-disposition") disposition = value;
      else if (key === "content-type") contentType = value;
    }
    if (!/^form-data\b/i.test(disposition))
      throw new MultipartError("a part without Content-Disposition: form-data");
    const name = param(disposition, "name");
    if (name === null) throw new MultipartError("a part without a name");
    parts.push({
      name,
      filename: param(disposition, "filename"),
      contentType,
      body: body.subarray(bodyStart, end),
    });
    if (parts.length > MAX_PARTS) throw new MultipartError("too many parts");
    at = end + 2;
  }
}
