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

const utf8 = new TextDecoder("utf-8", { fatal: true });
/**
 * A part's header lines, read as X-Filename is (src/runs/intake/filenames.ts, headerText): as
 * UTF-8 when they are (browsers send a file's name so), else as Latin-1, HTTP's historical reading.
 * A lenient UTF-8 decode put U+FFFD for the name's bytes: `caf\xE9.xml` was stored as "caf\uFFFD.xml".
 */
function headerLines(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    // Each byte its code point (ISO-8859-1), as Bun reads a request's own header bytes; WHATWG's
    // "latin1" decoder is windows-1252, which reads 0x80 as €.
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  }
}

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

/** RFC 9110 §5.6.2 token characters. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]$/;

/**
 * The `; key=value` parameters of a header value from `from` on (RFC 9110 §5.6.6; quoted-string
 * §5.6.4), keys lowercased. Strict: a regex over the whole value read `filename=` inside another
 * parameter's quoted value (`name="x; filename=evil"` had a file name), took the first of two
 * `name` parameters where other parsers take the last, and cut an unquoted `a b.json` to `a`.
 * Those are refused, as are unterminated quotes; a trailing `;` is tolerated.
 */
export function parameters(header: string, from: number): Map<string, string> {
  const out = new Map<string, string>();
  let i = from;
  const space = () => {
    while (header[i] === " " || header[i] === "\t") i++;
  };
  const token = () => {
    const start = i;
    while (i < header.length && TOKEN.test(header[i]!)) i++;
    return header.slice(start, i);
  };
  for (;;) {
    space();
    if (i >= header.length) return out;
    if (header[i] !== ";")
      throw new MultipartError(`unexpected ${JSON.stringify(header[i])} in a header's parameters`);
    i++;
    space();
    if (i >= header.length) return out;
    const key = token().toLowerCase();
    if (!key) throw new MultipartError("a header parameter without a name");
    space();
    if (header[i] !== "=") throw new MultipartError(`the header parameter ${key} has no value`);
    i++;
    space();
    let value = "";
    if (header[i] === '"') {
      for (i++; ; ) {
        if (i >= header.length)
          throw new MultipartError(`the header parameter ${key} has an unterminated quote`);
        const c = header[i++]!;
        if (c === '"') break;
        if (c === "\\") {
          if (i >= header.length)
            throw new MultipartError(`the header parameter ${key} has an unterminated quote`);
          value += header[i++];
        } else value += c;
      }
    } else {
      value = token();
      if (!value) throw new MultipartError(`the header parameter ${key} has no value`);
    }
    if (out.has(key)) throw new MultipartError(`the header parameter ${key} is given twice`);
    out.set(key, value);
  }
}

export function boundaryOf(contentType: string): string {
  const semi = contentType.indexOf(";");
  const b = semi < 0 ? undefined : parameters(contentType, semi).get("boundary");
  if (!b || b.length > 70) throw new MultipartError("missing or invalid boundary");
  return b;
}

export function parseMultipart(body: Uint8Array, boundary: string): Part[] {
  const enc = new TextEncoder();
  const delimiter = enc.encode(`--${boundary}`);
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
    const headers = emptyHead ? "" : headerLines(body.subarray(at, headEnd));
    const bodyStart = emptyHead ? at + 2 : headEnd + 4;
    const end = indexOf(body, next, bodyStart);
    if (end === -1) throw new MultipartError("a part is not terminated by a boundary");
    let disposition: string | null = null;
    let contentType: string | null = null;
    for (const line of headers.split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon < 1) throw new MultipartError("malformed part header");
      const key = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      // Twice is refused, not first or last wins: parsers in front of Assay may pick the other.
      if (
        (key === "content-disposition" && disposition !== null) ||
        (key === "content-type" && contentType !== null)
      )
        throw new MultipartError(`a part with two ${key} headers`);
      if (key === "content-disposition") disposition = value;
      else if (key === "content-type") contentType = value;
    }
    const type = disposition === null ? null : /^form-data[ \t]*(?=;|$)/i.exec(disposition);
    if (!type) throw new MultipartError("a part without Content-Disposition: form-data");
    const params = parameters(disposition!, type[0].length);
    const name = params.get("name");
    if (name === undefined) throw new MultipartError("a part without a name");
    parts.push({
      name,
      filename: params.get("filename") ?? null,
      contentType,
      body: body.subarray(bodyStart, end),
    });
    if (parts.length > MAX_PARTS) throw new MultipartError("too many parts");
    at = end + 2;
  }
}
