// The three request modes of a run (spec "Start a run", CONTRACT §4): raw body, JSON envelope,
// multipart. Each ends in the same Intake: the exact bytes to store, their media type and
// charset, filename and metadata. Problems in the request are collected into errors[] items.
import { isUtf8 } from "node:buffer";
import { AppError, type ErrorItem } from "../../errors.ts";
import {
  NAME_CHARACTERS,
  NO_LONE_SURROGATES,
  charCount,
  clip,
  jsonHasLoneSurrogate,
  jsonHasOverflow,
  NO_OVERFLOW,
  nameCharactersOk,
  quote,
} from "../../lib/text.ts";
import { MAX_JSON_DEPTH } from "../../validators/limits.ts";
import type { FileType } from "../../validators/types.ts";
import { decodeBase64 } from "./base64.ts";
import { asciiCompatible, charsetOf, decodeText, decodes, normaliseCharset, utf16ByBom } from "./charsets.ts";
import { MAX_METADATA_DEPTH, nestedDeeperThan } from "./depth.ts";
import { topLevelMembers } from "./envelope-text.ts";
import { checkFilename, headerText } from "./filenames.ts";
import { classify, parseMediaType, xmlEncoding } from "./filetypes.ts";
import { fileTypeOf, typeFromFilename } from "./media-types.ts";
import { MultipartError, type Part, boundaryOf, parseMultipart } from "./multipart.ts";

export interface Intake {
  bytes: Uint8Array;
  /** What the submission's data is, as declared: mime plus charset when one was given. */
  contentType: string;
  charset: string;
  filename: string | null;
  metadata: Record<string, unknown>;
  fileType: FileType;
  mode: "raw" | "envelope" | "multipart";
  /** The bytes' SHA-256 (hex) when the intake already computed it (off the HTTP thread). */
  sha256?: string;
}

/** The request headers intake reads (a Request's Headers, or a copy of them in a worker). */
export interface HeaderSource {
  get(name: string): string | null;
}

export interface IntakeLimits {
  maxMetadataBytes: number;
  maxFilenameLength: number;
}

const ENVELOPE_KEYS = new Set(["content", "content_type", "filename", "metadata", "content_encoding"]);

const unsupported = (what: string) => new AppError(415, "unsupported_media_type", what);
const unsupportedType = (mime: string) =>
  unsupported(`The content type ${quote(mime)} is not supported; use JSON, XML, YAML, CSV or text types.`);
const badRequest = (errors: ErrorItem[]) =>
  new AppError(400, "invalid_request", "The run request is invalid.", errors);
const utf8 = new TextEncoder();

/**
 * A declared charset must be one the server knows, and only one, whatever the mode: an envelope's
 * string content is stored as UTF-8 whatever it names, but a name that means nothing (or two
 * that disagree) is the client's mistake, refused as in raw mode (CONTRACT §4: 415).
 */
function checkCharset(media: NonNullable<ReturnType<typeof parseMediaType>>) {
  if (media.conflicting.includes("charset"))
    throw unsupported("The content type names more than one charset; name one.");
  if (media.charset !== null && !normaliseCharset(media.charset))
    throw unsupported(`The charset ${quote(media.charset)} is not supported.`);
}
/** Limits are in bytes of UTF-8, not UTF-16 code units ("é" counts 2). */
const byteLength = (text: string) => Buffer.byteLength(text, "utf8");

interface Fields {
  content: Uint8Array | string | unknown;
  /** An envelope's object or array content as the client wrote it: what is stored. */
  contentText?: string;
  contentType: unknown;
  filename: unknown;
  metadata: unknown;
  encoding: unknown;
  /** true when metadata arrived as JSON text (multipart) and must be parsed. */
  metadataIsText: boolean;
}

/** The headers intake reads: all a worker needs to be sent. */
export const INTAKE_HEADERS = [
  "content-type",
  "x-submission-mode",
  "content-encoding",
  "x-filename",
] as const;

/** Decides the mode and turns the request into an Intake, or throws 400/415. Pure: no I/O. */
export function intake(headers: HeaderSource, body: Uint8Array, limits: IntakeLimits): Intake {
  const header = headers.get("content-type");
  const media = parseMediaType(header);
  const forced = headers.get("x-submission-mode")?.trim().toLowerCase();
  // CONTRACT §4 step 7: a media type that is not supported (415) before any malformed field (400).
  if (!media && header) throw unsupported(`${quote(header)} is not a media type.`);
  if (media) {
    // A type no mode takes is raw, whatever else is wrong with the request.
    if (media.mime !== "multipart/form-data" && !fileTypeOf(media.mime)) throw unsupportedType(media.mime);
    checkCharset(media);
  }
  if (forced !== undefined && forced !== "raw" && forced !== "envelope")
    throw badRequest([
      { field: "X-Submission-Mode", code: "invalid", message: "X-Submission-Mode is raw or envelope." },
    ]);
  if (!media)
    throw badRequest([
      { field: "Content-Type", code: "required", message: "Set Content-Type to the payload's media type." },
    ]);
  // The header settles how a JSON body is read (CONTRACT §4); it cannot make another type an
  // envelope, nor a multipart body raw. Such a request is refused: before, the header was
  // ignored and the envelope's own text was stored as the document (F4, docs/decisions.md).
  if (forced === "envelope" && media.mime !== "application/json" && media.mime !== "multipart/form-data")
    throw unsupported(
      `An envelope (X-Submission-Mode: envelope) is sent as Content-Type: application/json, not ${quote(media.mime)}.`,
    );
  if (forced === "raw" && media.mime === "multipart/form-data")
    throw unsupported(
      "A raw body (X-Submission-Mode: raw) is the document itself, not multipart/form-data: send its bytes with its own Content-Type.",
    );
  if (media.mime === "multipart/form-data") return fromMultipart(header!, body, limits);
  if (media.mime === "application/json" && forced !== "raw") {
    const charset = media.charset === null ? "utf-8" : charsetOf(media.charset, body)!;
    const obj = parseEnvelope(body, forced === "envelope", charset);
    if (obj) return fromFields("envelope", obj, limits);
  }
  return fromRaw(headers, header!, body, media, limits);
}

// Buffer needles: a string needle is encoded into a new buffer on every indexOf.
const CONTENT_KEY = Buffer.from('"content"');
const UNICODE_ESCAPE = Buffer.from("\\u");

/**
 * False when the bytes cannot hold an envelope: not a JSON object, or no "content" key (a key can
 * only be spelled otherwise with \u escapes). Spares the HTTP thread a parse of every raw JSON
 * document: ~130 ms of blocking for a 10 MB array (docs/benchmarks.md). Bytes of an
 * ASCII-compatible charset only.
 */
function mayBeEnvelope(body: Uint8Array): boolean {
  const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  let i = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0; // BOM
  while (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d) i++;
  return b[i] === 0x7b && (b.indexOf(CONTENT_KEY) >= 0 || b.indexOf(UNICODE_ESCAPE) >= 0);
}

/** mayBeEnvelope for decoded text (UTF-16, where `{` is two bytes and the sniff above misses it). */
function mayBeEnvelopeText(text: string): boolean {
  let i = 0;
  while (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r") i++;
  return text[i] === "{" && (text.includes('"content"') || text.includes("\\u"));
}

/** The envelope read in the charset its Content-Type names (UTF-8 unless it names another). */
function parseEnvelope(body: Uint8Array, required: boolean, charset: string): Fields | null {
  const ascii = asciiCompatible(charset);
  if (!required && ascii && !mayBeEnvelope(body)) return null;
  let text: string;
  let v: unknown;
  try {
    text = decodeText(body, charset);
    if (!required && !ascii && !mayBeEnvelopeText(text)) return null;
    v = JSON.parse(text);
  } catch {
    if (required)
      throw badRequest([
        {
          field: "body",
          code: "parse_error",
          message: `The envelope is not valid ${charset === "utf-8" ? "UTF-8" : charset} JSON.`,
        },
      ]);
    return null;
  }
  const isEnvelope =
    v !== null &&
    typeof v === "object" &&
    !Array.isArray(v) &&
    "content" in v &&
    Object.keys(v).every((k) => ENVELOPE_KEYS.has(k));
  if (!isEnvelope) {
    if (!required) return null;
    const errors: ErrorItem[] = [];
    if (v === null || typeof v !== "object" || Array.isArray(v))
      errors.push({ field: "body", code: "invalid", message: "The envelope must be a JSON object." });
    else {
      if (!("content" in v))
        errors.push({ field: "content", code: "required", message: "The envelope needs content." });
      for (const k of Object.keys(v))
        if (!ENVELOPE_KEYS.has(k))
          errors.push({
            field: clip(k),
            code: "unknown_field",
            message: `Unknown envelope field ${quote(k)}.`,
          });
    }
    throw badRequest(errors);
  }
  const o = v as Record<string, unknown>;
  // JSON.parse keeps the last of two equal keys, and the JSON validator warns about the document's
  // own: an envelope field given twice is ambiguous, refused as a multipart part sent twice is.
  const members = topLevelMembers(text)!;
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const m of members) (seen.has(m.key) ? twice : seen).add(m.key);
  if (twice.size)
    throw badRequest(
      [...twice].map((k) => ({ field: k, code: "duplicate", message: `The field "${k}" is sent twice.` })),
    );
  const content = members.find((m) => m.key === "content")!;
  return {
    content: o.content,
    contentText:
      o.content !== null && typeof o.content === "object"
        ? text.slice(content.start, content.end)
        : undefined,
    // Without content_type, a string's type comes from the filename's extension, as a multipart
    // file part's does: the spec handles a multipart request "the same way as a JSON envelope".
    contentType:
      o.content_type == null && typeof o.content === "string" && typeof o.filename === "string"
        ? typeFromFilename(o.filename)
        : o.content_type,
    filename: o.filename,
    metadata: o.metadata,
    encoding: o.content_encoding,
    metadataIsText: false,
  };
}

function fromMultipart(contentType: string, body: Uint8Array, limits: IntakeLimits): Intake {
  let parts: Part[];
  try {
    parts = parseMultipart(body, boundaryOf(contentType));
  } catch (e) {
    const why = e instanceof MultipartError ? e.message : "unreadable";
    throw badRequest([
      {
        field: "body",
        code: "malformed_multipart",
        message: `The multipart body could not be parsed: ${why}.`,
      },
    ]);
  }
  const errors: ErrorItem[] = [];
  const known = new Set(["file", "content", "filename", "content_type", "metadata", "content_encoding"]);
  const byName = new Map<string, Part>();
  for (const p of parts) {
    if (!known.has(p.name))
      errors.push({ field: clip(p.name), code: "unknown_field", message: `Unknown part ${quote(p.name)}.` });
    else if (byName.has(p.name))
      errors.push({ field: p.name, code: "duplicate", message: `The part "${p.name}" is sent twice.` });
    else byName.set(p.name, p);
  }
  const file = byName.get("file");
  const text = byName.get("content");
  if (file && text)
    errors.push({
      field: "file",
      code: "conflict",
      message: "Send either a file part or a content part, not both.",
    });
  if (!file && !text) errors.push({ field: "file", code: "required", message: "A file part is required." });
  if (errors.length) throw badRequest(errors);
  // An empty part is an absent one, as a form field left blank (curl -F 'filename='): it does not
  // override the file part's own name or type. Text parts are UTF-8 (RFC 7578 §5.1), strictly.
  const field = (n: string) => {
    const p = byName.get(n);
    if (!p?.body.length) return undefined;
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(p.body);
    } catch {
      errors.push({ field: n, code: "invalid_encoding", message: `The ${n} part is not valid UTF-8.` });
      return undefined;
    }
  };
  const [typePart, filenamePart, metadata, encoding] = [
    "content_type",
    "filename",
    "metadata",
    "content_encoding",
  ].map(field);
  if (errors.length) throw badRequest(errors);
  const payload = (file ?? text)!;
  const partType =
    payload.contentType && !/^application\/octet-stream\b/i.test(payload.contentType)
      ? payload.contentType
      : undefined;
  const partName = payload.filename || undefined;
  return fromFields(
    "multipart",
    {
      // The bytes exactly as sent: a file part is never decoded or re-encoded on the way.
      content: payload.body,
      // The part's own type is the next best thing to an explicit content_type, then the name's
      // extension (some clients send every file part as application/octet-stream).
      contentType: typePart ?? partType ?? typeFromFilename(filenamePart ?? partName),
      filename: filenamePart ?? partName,
      metadata,
      encoding,
      metadataIsText: true,
    },
    limits,
  );
}

/**
 * A content type is stored and returned with every read of the run (and a list page holds 50):
 * bounded, and one line of text like a name. RFC 6838 §4.2 bounds type and subtype at 127
 * characters each; 255 leaves room for a charset and a parameter or two. A TAB stays: HTTP
 * allows it around a header's parameters (RFC 9110 §5.6.3).
 */
export const MAX_CONTENT_TYPE_LENGTH = 255;

function contentTypeOk(v: string, field: string, errors: ErrorItem[]): boolean {
  if (charCount(v) > MAX_CONTENT_TYPE_LENGTH)
    errors.push({
      field,
      code: "too_long",
      message: `${field} may hold at most ${MAX_CONTENT_TYPE_LENGTH} characters.`,
    });
  else if (!nameCharactersOk(v.replaceAll("\t", " ")))
    errors.push({ field, code: "invalid", message: `${field} ${NAME_CHARACTERS}.` });
  else return true;
  return false;
}

function fromFields(mode: "envelope" | "multipart", f: Fields, limits: IntakeLimits): Intake {
  const errors: ErrorItem[] = [];
  // content_type: required for text content; objects and arrays are JSON by nature.
  let ct = f.contentType;
  if (
    (ct === undefined || ct === null) &&
    f.content !== null &&
    typeof f.content === "object" &&
    !(f.content instanceof Uint8Array)
  )
    ct = "application/json";
  let media: ReturnType<typeof parseMediaType> = null;
  if (ct === undefined || ct === null || ct === "")
    errors.push({
      field: "content_type",
      code: "required",
      message:
        "content_type is required: the media type of content (or a filename whose extension names one).",
    });
  else if (typeof ct !== "string")
    errors.push({ field: "content_type", code: "invalid", message: "content_type must be a string." });
  else if (contentTypeOk(ct, "content_type", errors)) {
    media = parseMediaType(ct);
    if (!media) throw unsupported(`${quote(ct)} is not a media type.`);
    // Before the other fields' problems (CONTRACT §4 step 7), as in raw mode.
    if (!fileTypeOf(media.mime)) throw unsupportedType(media.mime);
    checkCharset(media);
  }
  const filename = checkFilename(f.filename, limits, errors);
  // metadata: a JSON object, bounded.
  let metadata: Record<string, unknown> = {};
  let meta = f.metadata;
  // An empty multipart part is no part (docs/api.md); an envelope's "" is a string, not an object.
  if (meta !== undefined && meta !== null && (meta !== "" || mode === "envelope")) {
    if (f.metadataIsText && typeof meta === "string") {
      // Measured below as the envelope's is, by the object's JSON: the part's own text was
      // measured before, so spacing or escapes that fit an envelope were a 400 in multipart. The
      // part is bounded by the body's limit (and read off the HTTP thread when large).
      try {
        // A part holding `null` is no metadata, as the envelope's `"metadata": null` is.
        meta = JSON.parse(meta) ?? undefined;
      } catch {
        errors.push({
          field: "metadata",
          code: "parse_error",
          message: "metadata must be a JSON object (the text is not JSON).",
        });
        meta = undefined;
      }
    }
    if (meta !== undefined && !errors.some((e) => e.field === "metadata")) {
      if (meta === null || typeof meta !== "object" || Array.isArray(meta))
        errors.push({ field: "metadata", code: "invalid", message: "metadata must be a JSON object." });
      // Before JSON.stringify below, which recurses: the API's nesting bound.
      else if (nestedDeeperThan(meta, MAX_METADATA_DEPTH))
        errors.push({
          field: "metadata",
          code: "too_deep",
          message: `metadata may nest at most ${MAX_METADATA_DEPTH} levels.`,
        });
      else {
        const json = JSON.stringify(meta);
        if (jsonHasLoneSurrogate(json))
          errors.push({
            field: "metadata",
            code: "invalid",
            message: `metadata ${NO_LONE_SURROGATES}, in keys or values.`,
          });
        else if (jsonHasOverflow(meta))
          errors.push({ field: "metadata", code: "invalid", message: `metadata ${NO_OVERFLOW}.` });
        else if (byteLength(json) > limits.maxMetadataBytes)
          errors.push({
            field: "metadata",
            code: "too_large",
            message: `metadata may hold at most ${limits.maxMetadataBytes} bytes.`,
          });
        else metadata = meta as Record<string, unknown>;
      }
    }
  }
  // content and its encoding.
  const enc = f.encoding;
  const base64 = typeof enc === "string" && enc.trim().toLowerCase() === "base64";
  if (enc !== undefined && enc !== null && (enc !== "" || mode === "envelope") && !base64)
    errors.push({
      field: "content_encoding",
      code: "invalid",
      message: 'content_encoding is "base64" or absent.',
    });
  let bytes: Uint8Array | null = null;
  let decodedFromString = false;
  const c = f.content;
  if (c === undefined || c === null)
    errors.push({ field: "content", code: "required", message: "content is required." });
  else if (c instanceof Uint8Array) bytes = base64 ? decodeBase64(new TextDecoder().decode(c)) : c;
  else if (typeof c === "string" && !base64 && !c.isWellFormed())
    // UTF-8 cannot hold one: encoding put U+FFFD in its place, and stored what was not sent.
    errors.push({
      field: "content",
      code: "invalid_encoding",
      message: `content ${NO_LONE_SURROGATES}: no encoding stores one.`,
    });
  else if (typeof c === "string") {
    bytes = base64 ? decodeBase64(c) : utf8.encode(c);
    decodedFromString = !base64;
  } else if (typeof c === "object") {
    if (base64)
      errors.push({
        field: "content_encoding",
        code: "invalid",
        message: "base64 applies to string content only.",
      });
    // The documents' nesting bound (docs/limits.md): deeper is refused here, not stored.
    else if (nestedDeeperThan(c, MAX_JSON_DEPTH))
      errors.push({
        field: "content",
        code: "too_deep",
        message: `content may nest at most ${MAX_JSON_DEPTH} levels.`,
      });
    else {
      // The text as sent (only an envelope has object content; it always brings its text).
      bytes = utf8.encode(f.contentText ?? JSON.stringify(c));
      decodedFromString = true;
    }
  } else
    errors.push({
      field: "content",
      code: "invalid",
      message: "content must be a string, an object or an array.",
    });
  if (base64 && bytes === null && !errors.some((e) => e.field.startsWith("content")))
    errors.push({ field: "content", code: "invalid_base64", message: "content is not valid base64." });
  if (errors.length) throw badRequest(errors);
  // A JS string is Unicode: stored as UTF-8 whatever charset the content_type names.
  const charset = decodedFromString ? "utf-8" : (media!.charset ?? "utf-8");
  return finish(
    mode,
    bytes!,
    media!,
    decodedFromString ? "utf-8" : charset,
    filename,
    metadata,
    ct as string,
    decodedFromString,
  );
}

function fromRaw(
  headers: HeaderSource,
  /** The Content-Type header, as intake() read it (a header read makes a new string each time). */
  contentType: string,
  body: Uint8Array,
  media: NonNullable<ReturnType<typeof parseMediaType>>,
  limits: IntakeLimits,
): Intake {
  const errors: ErrorItem[] = [];
  const enc = headers.get("content-encoding")?.trim().toLowerCase();
  let bytes: Uint8Array | null = body;
  if (enc && enc !== "identity") {
    if (enc !== "base64")
      // Accept-Encoding names the codings a run start takes (RFC 9110 §15.5.16).
      throw new AppError(
        415,
        "unsupported_media_type",
        `Content-Encoding ${quote(enc)} is not supported; use base64 or none.`,
        [],
        {
          "Accept-Encoding": "base64, identity",
        },
      );
    bytes = decodeBase64(new TextDecoder().decode(body));
    if (!bytes)
      errors.push({
        field: "body",
        code: "invalid_base64",
        message: "The body is not valid base64 (Content-Encoding: base64).",
      });
  }
  const filename = checkFilename(headerText(headers.get("x-filename")), limits, errors, "X-Filename");
  // The header is stored as the submission's content type, as in the other modes.
  contentTypeOk(contentType, "Content-Type", errors);
  if (errors.length) throw badRequest(errors);
  return finish("raw", bytes!, media, media.charset ?? "utf-8", filename, {}, contentType);
}

function finish(
  mode: Intake["mode"],
  bytes: Uint8Array,
  media: NonNullable<ReturnType<typeof parseMediaType>>,
  charsetLabel: string,
  filename: string | null,
  metadata: Record<string, unknown>,
  declared: string,
  /** The content came as a JSON string: already decoded, whatever its declaration says. */
  fromText = false,
): Intake {
  const declaredType = fileTypeOf(media.mime);
  if (!declaredType) throw unsupportedType(media.mime);
  // XML without a charset parameter: its own declaration (or BOM) governs (RFC 7303 §3). That
  // declaration is content, not envelope: an encoding the server cannot use, or bytes that do not
  // decode in it, make the document not well-formed (XML 1.0 §4.3.3), so the bytes are kept as
  // they are and the XML parser, which reads them itself, reports it as a finding.
  if (declaredType === "XML" && !media.charset && !fromText && charsetLabel === "utf-8") {
    const own = xmlEncoding(bytes);
    const usable = own === null ? "utf-8" : normaliseCharset(own);
    // "utf-8" for bytes the worker must not re-encode: libxml2 then reads the declaration.
    const charset = usable && decodes(bytes, usable) ? usable : "utf-8";
    return { bytes, contentType: declared.trim(), charset, filename, metadata, fileType: "XML", mode };
  }
  // Without a charset parameter, a UTF-16 byte order mark names the encoding (charsets.ts).
  const label = !media.charset && !fromText && utf16ByBom(declaredType, bytes) ? "utf-16" : charsetLabel;
  const charset = charsetOf(label, bytes);
  if (!charset) throw unsupported(`The charset ${quote(charsetLabel)} is not supported.`);
  // The text itself is needed only to tell JSON from plain text; otherwise checking that the
  // bytes decode is enough, and for UTF-8 that check allocates nothing (a 10 MiB document was a
  // 10–20 MiB string on the main thread, and ~4 µs of a 1 KB sync run). isUtf8 accepts exactly
  // what a fatal TextDecoder does (BOM included; overlongs, surrogates and truncations refused).
  let text: string | null = null;
  const invalid = () =>
    badRequest([
      { field: "charset", code: "invalid_encoding", message: `The content is not valid ${charset}.` },
    ]);
  if (charset === "utf-8" && declaredType !== "TEXT") {
    if (!isUtf8(bytes)) throw invalid();
  } else {
    try {
      text = decodeText(bytes, charset);
    } catch {
      throw invalid();
    }
  }
  return {
    bytes,
    contentType: declared.trim(),
    charset,
    filename,
    metadata,
    fileType: text === null ? declaredType : classify(declaredType, text),
    mode,
  };
}
