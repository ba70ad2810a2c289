// Reading a request body under a limit: refused from Content-Length before anything is read
// when the length is known, and counted while streaming when it is not (chunked).
import { AppError } from "../errors.ts";

export const tooLarge = (max: number) =>
  new AppError(413, "payload_too_large", `The request body exceeds the limit of ${max} bytes.`);

const incomplete = () =>
  new AppError(400, "invalid_request", "The request body could not be read completely.", [
    { field: "body", code: "incomplete", message: "The connection ended before the body was complete." },
  ]);

/**
 * The whole body in one native call (a declared length within the limit): a client that goes away
 * before it is complete gets readBody's 400, not a 500 and an "unhandled error" line.
 */
export function readWhole(request: Request): Promise<Uint8Array> {
  return request.bytes().catch(() => {
    throw incomplete();
  });
}

export async function readBody(request: Request, max: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > max) throw tooLarge(max);
  if (!request.body) return new Uint8Array(0);
  // A declared length: one buffer of that size, each chunk copied in as it comes (no list of
  // chunks, no second copy at the end). Otherwise (chunked): gather, then join once.
  const length =
    declared !== null && /^\d+$/.test(declared) && !request.headers.has("transfer-encoding")
      ? Number(declared)
      : -1;
  const into = length >= 0 ? new Uint8Array(length) : null;
  const chunks: Uint8Array[] = [];
  let total = 0;
  // A reader of our own rather than `for await`: stopping a `for await` early awaits the stream's
  // cancel, and when the body is one branch of a tee (request.clone(), src/http/limits.ts) that
  // cancel settles only once the other branch is cancelled too (the Streams standard's tee) —
  // the original body, which nobody cancels until the answer is written: the 413 was never
  // written (a chunked body still arriving when the limit was crossed hung its connection).
  // Stopping early cancels without waiting; the rest of the body is the server's to discard.
  const reader = request.body.getReader();
  const stop = (e: AppError) => {
    reader.cancel(e).catch(() => {});
    return e;
  };
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      const chunk = r.value;
      if (into && total + chunk.byteLength <= length) into.set(chunk, total);
      else if (into)
        throw stop(incomplete()); // more than it declared (the server should not let it)
      else chunks.push(chunk);
      total += chunk.byteLength;
      if (total > max) throw stop(tooLarge(max));
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    // The client went away or was cut off by the idle timeout: a client error, not our bug.
    throw incomplete();
  }
  if (into) {
    if (total !== length) throw incomplete();
    return into;
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
