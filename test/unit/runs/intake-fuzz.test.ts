// The run request's intake (src/runs/intake/) over generated hostile bodies: whatever the body and
// headers, it returns an Intake or refuses with 400/415 — never another error, which the route
// would answer 500 (issue #19: a deep envelope overflowed JSON.stringify). Pure function, so many
// thousands of cases run in seconds; test/fuzz.test.ts sends the same kinds over HTTP.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { AppError } from "../../../src/errors.ts";
import { type Intake, intake } from "../../../src/runs/intake/modes.ts";

const LIMITS = { maxMetadataBytes: 16384, maxFilenameLength: 255 };
const enc = new TextEncoder();

/** Runs intake; returns the Intake or the refusal's status, and fails on anything else. */
function outcome(headers: Record<string, string>, body: Uint8Array): Intake | number {
  try {
    return intake(new Headers(headers), body, LIMITS);
  } catch (e) {
    if (e instanceof AppError) {
      expect([400, 415]).toContain(e.status);
      for (const item of e.errors) expect(typeof item.field).toBe("string");
      return e.status;
    }
    throw e;
  }
}

// Nesting far beyond any bound, in every shape JSON allows, sometimes cut short.
const deep = fc
  .tuple(
    // Mostly just past the bounds (256, 512); now and then as deep as the attack (100,000).
    fc.oneof(
      { weight: 9, arbitrary: fc.integer({ min: 200, max: 3000 }) },
      { weight: 1, arbitrary: fc.constant(100_000) },
    ),
    fc.constantFrom("array", "object", "mixed"),
    fc.boolean(),
  )
  .map(([d, shape, cut]) => {
    const open = shape === "array" ? "[" : shape === "object" ? '{"k":' : '[{"k":';
    const close = shape === "array" ? "]" : shape === "object" ? "}" : "}]";
    const n = shape === "mixed" ? d >> 1 : d;
    const text = open.repeat(n) + (shape === "array" ? "" : "1") + close.repeat(n);
    return cut ? text.slice(0, -1) : text;
  });
const scalar = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"),
  fc.constantFrom('"x"', '"PGE+PC9hPg=="', "1e999", "-0", "null", "true", '"text/plain"', '"base64"'),
);
const fieldValue = fc.oneof(scalar, deep);
const envelopeText = fc
  .record(
    {
      content: fieldValue,
      content_type: fc.oneof(
        fc.constantFrom('"application/json"', '"text/plain"', '"application/xml; charset=utf-16"', '"x/y"'),
        fieldValue,
      ),
      filename: fieldValue,
      metadata: fieldValue,
      content_encoding: fieldValue,
      extra: fieldValue,
    },
    { requiredKeys: ["content"] },
  )
  .map(
    (o) =>
      `{${Object.entries(o)
        .map(([k, v]) => `"${k}":${v}`)
        .join(",")}}`,
  );

const multipartText = fc
  .array(
    fc.record({
      name: fc.constantFrom(
        "file",
        "content",
        "metadata",
        "filename",
        "content_type",
        "content_encoding",
        "x",
      ),
      value: fc.oneof(fieldValue, fc.string({ maxLength: 40 })),
    }),
    { maxLength: 5 },
  )
  .map((parts) =>
    parts
      .map(
        (p) =>
          `--B\r\nContent-Disposition: form-data; name="${p.name}"${p.name === "file" ? '; filename="f.json"' : ""}\r\n\r\n${p.value}\r\n`,
      )
      .join("")
      .concat("--B--\r\n"),
  );

const contentType = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "text/plain; charset=utf-16le",
  "application/xml",
  "text/csv",
  "application/yaml",
  "image/svg+xml",
  "bogus",
);
const headers = fc.record(
  {
    "x-submission-mode": fc.constantFrom("raw", "envelope", "RAW", "other"),
    "content-encoding": fc.constantFrom("base64", "gzip", "identity"),
    "x-filename": fc.constantFrom("a.json", "../x", "a\u0001b", "x".repeat(300)),
  },
  { requiredKeys: [] },
);

describe("intake never throws anything but a 400 or 415", () => {
  test("JSON envelopes with deep, huge or mistyped fields (300 cases)", () => {
    fc.assert(
      fc.property(envelopeText, headers, (body, h) => {
        outcome({ ...h, "content-type": "application/json" }, enc.encode(body));
      }),
      { numRuns: 300 },
    );
  });

  test("multipart bodies whose parts are deep or mistyped (400 cases)", () => {
    fc.assert(
      fc.property(multipartText, (body) => {
        outcome({ "content-type": "multipart/form-data; boundary=B" }, enc.encode(body));
      }),
      { numRuns: 400 },
    );
  });

  test("raw bodies of every type: deep text, bytes, base64 (600 cases)", () => {
    const raw = fc.oneof(
      deep.map((t) => enc.encode(t)),
      fc.uint8Array({ maxLength: 400 }),
    );
    fc.assert(
      fc.property(raw, contentType, headers, (body, ct, h) => {
        outcome({ ...h, "content-type": ct }, body);
      }),
      { numRuns: 600 },
    );
  });

  test("what is accepted keeps its promises: bytes to store, a known file type", () => {
    fc.assert(
      fc.property(envelopeText, (body) => {
        const r = outcome({ "content-type": "application/json" }, enc.encode(body));
        if (typeof r === "number") return;
        expect(r.bytes).toBeInstanceOf(Uint8Array);
        expect(["JSON", "XML", "YAML", "CSV", "TEXT"]).toContain(r.fileType);
        expect(JSON.stringify(r.metadata).length).toBeLessThanOrEqual(LIMITS.maxMetadataBytes);
      }),
      { numRuns: 100 },
    );
  });
});
