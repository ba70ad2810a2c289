// Reading a request body under a limit: refused from Content-Length before anything is read
// when the length is known, and counted while streaming when it is not (chunked).
import { AppError } from "../errors.ts";

export const tooLarge = (max: number) =>
  new AppError(413, "payload_too_large", `The request body exceeds the limit of ${max} bytes.`);

export async function readBody(request: Request, max: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > max) throw tooLarge(max);
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
      total += chunk.byteLength;
      if (total > max) throw tooLarge(max);
      chunks.push(chunk);
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    // The client went away or was cut off by the idle timeout: a client error, not our bug.
    throw new AppError(400, "invalid_request", "The request body could not be read completely.", [
      { field: "body", code: "incomplete", message: "The connection ended before the body was complete." },
    ]);
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
