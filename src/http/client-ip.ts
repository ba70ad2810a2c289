// The client's address as recorded (audit log): the socket peer, or — with ASSAY_TRUST_PROXY,
// behind your own reverse proxy — the address that proxy appended to X-Forwarded-For (the last
// hop: earlier ones are whatever the client sent). The whole address is kept; the rate limiter
// keys IPv6 by /64 instead (src/http/ratelimit.ts, ipKey).
import { peerAddress } from "./peer.ts";

type Server = { requestIP(r: Request): { address: string } | null } | null | undefined;

/** Longest value kept: an IPv6 address with a zone fits; anything longer is not an address. */
const MAX_LENGTH = 64;

export function normalizeIp(address: string): string | null {
  const a = address
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  if (!a || a.length > MAX_LENGTH || !/^[0-9a-f:.%a-z_-]+$/.test(a)) return null;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  return mapped ? mapped[1]! : a;
}

export function clientIp(request: Request, server: Server, trustProxy: boolean): string | null {
  if (trustProxy) {
    const hops = request.headers.get("x-forwarded-for")?.split(",");
    const last = hops?.[hops.length - 1];
    if (last?.trim()) return normalizeIp(last);
  }
  const peer = peerAddress(request, server);
  return peer ? normalizeIp(peer) : null;
}
