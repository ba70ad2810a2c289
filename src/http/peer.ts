// The client's socket address. A request another HTTP thread accepted (src/http/threads/) reaches
// the app as a Request built by the relay, which Bun's server knows nothing about: the relay
// records the peer here. Never a header: a client could send any header it likes.
type Server = { requestIP(r: Request): { address: string } | null } | null | undefined;

/** Set by the relay for every request it hands to the app (the address, or null if unknown). */
export const relayedPeer = new WeakMap<Request, string | null>();

export function peerAddress(request: Request, server: Server): string | null {
  if (relayedPeer.has(request)) return relayedPeer.get(request) ?? null;
  return server?.requestIP(request)?.address ?? null;
}
