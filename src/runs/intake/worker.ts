// Entry point of the intake thread (src/runs/intake/offload.ts): large run requests are read here —
// envelope and multipart parsing, base64, charset checks, hashing — so that no request body, however
// large, holds the HTTP thread. A build entrypoint (scripts/build.ts); started from a URL built in
// src/server.ts, like the validation workers. Pure computation: no database, no network.
import { AppError, toWire } from "../../errors.ts";
import { intake } from "./modes.ts";
import type { FromIntake, ToIntake } from "./offload.ts";

declare const self: Worker;

self.onmessage = (event: MessageEvent<ToIntake>) => {
  const m = event.data;
  let answer: FromIntake;
  let transfer: ArrayBuffer[] = [];
  try {
    const body = new Uint8Array(m.body, 0, m.length);
    const out = intake(new Headers(m.headers), body, m.limits);
    // The result's bytes go back without a copy: a view of the body we were given, or bytes of
    // their own (decoded base64, serialized content). A view into anything else is copied first.
    const own = out.bytes.buffer === m.body;
    const bytes = own || isWhole(out.bytes) ? out.bytes : out.bytes.slice();
    const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const { bytes: _, ...rest } = out;
    answer = {
      id: m.id,
      ok: true,
      intake: { ...rest, sha256 },
      bytes: bytes.buffer as ArrayBuffer,
      offset: bytes.byteOffset,
      length: bytes.byteLength,
    };
    transfer = [bytes.buffer as ArrayBuffer];
  } catch (e) {
    answer =
      e instanceof AppError
        ? { id: m.id, ok: false, error: toWire(e) }
        : { id: m.id, ok: false, failure: String((e as Error)?.stack ?? e) };
  }
  self.postMessage(answer, transfer);
};

const isWhole = (b: Uint8Array) => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength;
