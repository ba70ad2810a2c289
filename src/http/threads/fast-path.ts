// Which requests an HTTP thread offers to read and check itself (handoff.ts): a sync run start
// the inline lane may take. Decided from the request line and headers alone; whatever else the
// route needs to know (token, role, workflow, limits) the main thread decides before it asks.
import { INLINE_MAX_BYTES } from "../../jobs/inline.ts";
import { parsePrefer } from "../../runs/prefer.ts";

const RUN_START = /^\/api\/v1\/orgs\/[^/?#]+\/workflows\/[^/?#]+\/runs\/$/;
const BEARER = /^bearer\s/i;

/** `maxPayloadBytes`: a larger declared body gets its 413 where the route reads bodies (the main thread). */
export function fastCandidate(req: Request, maxPayloadBytes: number): boolean {
  if (req.method !== "POST") return false;
  const h = req.headers;
  // A bearer token: a session's request needs its CSRF checks on the main thread's terms anyway.
  if (!BEARER.test(h.get("authorization") ?? "")) return false;
  // Idempotent starts keep their whole path (the key is checked against the body there).
  if (h.has("idempotency-key") || h.has("transfer-encoding")) return false;
  const declared = h.get("content-length");
  if (declared === null || !/^\d{1,9}$/.test(declared) || Number(declared) > INLINE_MAX_BYTES) return false;
  if (Number(declared) > maxPayloadBytes) return false;
  if (parsePrefer(h.get("prefer")).respondAsync) return false;
  const url = req.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const q = url.indexOf("?", start);
  return RUN_START.test(q === -1 ? url.slice(start) : url.slice(start, q));
}
