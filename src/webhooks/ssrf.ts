// SSRF guard for webhook targets. A URL is resolved and refused when ANY of its addresses is
// not a public unicast address: an attacker controlling DNS can answer with one public and one
// internal address. The dispatcher then connects to the checked address itself (see
// deliver.ts), so a second DNS answer cannot swap in an internal one (DNS rebinding).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

// Which addresses are special comes from ipaddr.js (IANA's special-purpose registries, kept up to
// date by its maintainers): anything it does not call plain `unicast` is refused. The tables below
// only name the refusals for people, and say which ranges embed an IPv4 address to judge instead.

const V4_LABELS: Record<string, string> = {
  unspecified: "unspecified",
  private: "private",
  carrierGradeNat: "shared (carrier-grade NAT)",
  loopback: "loopback",
  linkLocal: "link-local (cloud metadata)",
  multicast: "multicast",
};
const V6_LABELS: Record<string, string> = {
  unspecified: "unspecified",
  loopback: "loopback",
  uniqueLocal: "private (unique local)",
  linkLocal: "link-local",
  multicast: "multicast",
};
/** Within ipaddr's `reserved`: the documentation ranges (RFC 5737, RFC 3849), named as such. */
const DOCUMENTATION = ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"].map((c) =>
  ipaddr.parseCIDR(c),
);
/** NAT64's well-known prefix (RFC 6052) carries a public IPv4 address; its local-use /48 does not. */
const NAT64_WKP = ipaddr.parseCIDR("64:ff9b::/96");

const strip = (ip: string) => ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");

const documentation = (a: ipaddr.IPv4 | ipaddr.IPv6) =>
  DOCUMENTATION.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));

function v4Class(a: ipaddr.IPv4): string | null {
  const range = a.range();
  if (range === "unicast") return null;
  if (documentation(a)) return "documentation";
  if (range === "benchmarking" || a.match(ipaddr.IPv4.parse("198.18.0.0"), 15)) return "benchmarking";
  return V4_LABELS[range] ?? "reserved";
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
const low32 = (a: ipaddr.IPv6) =>
  new ipaddr.IPv4([a.parts[6]! >> 8, a.parts[6]! & 0xff, a.parts[7]! >> 8, a.parts[7]! & 0xff]);

function v6Class(a: ipaddr.IPv6): string | null {
  const range = a.range();
  if (range === "unicast") {
    // IPv4-compatible (::a.b.c.d, deprecated by RFC 4291): ipaddr.js calls it unicast.
    return a.parts.slice(0, 6).every((x) => x === 0) ? "reserved" : null;
  }
  switch (range) {
    case "ipv4Mapped": // ::ffff:a.b.c.d
      return v4Class(low32(a));
    case "rfc6052": // NAT64: 64:ff9b::a.b.c.d reaches a.b.c.d through the translator
      return a.match(NAT64_WKP) ? v4Class(low32(a)) : "reserved";
    case "6to4": // 2002:AABB:CCDD::/48 tunnels to AA.BB.CC.DD
      return v4Class(
        new ipaddr.IPv4([a.parts[1]! >> 8, a.parts[1]! & 0xff, a.parts[2]! >> 8, a.parts[2]! & 0xff]),
      );
    case "rfc6145": // IPv4-translated (::ffff:0:a.b.c.d): never a public target of its own
      return v4Class(low32(a)) ?? "reserved";
  }
  if (documentation(a)) return "documentation";
  return V6_LABELS[range] ?? "reserved";
}

/**
 * An IPv6 literal in the WHATWG URL parser's form (hex groups only), or null. ipaddr.js reads a
 * dotted tail after "::" as IPv4-mapped (`::8.8.8.8` as `::ffff:8.8.8.8`), which RFC 4291 calls
 * IPv4-compatible, a different range; the URL parser rewrites the tail as two hex groups.
 */
function canonicalV6(s: string): string | null {
  try {
    return new URL(`http://[${s}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
}

/** The eight 16-bit groups of an IPv6 address (brackets and zone id dropped), or null. */
export function parseV6(input: string): number[] | null {
  const s = canonicalV6(strip(input));
  return s !== null && ipaddr.IPv6.isValid(s) ? ipaddr.IPv6.parse(s).parts.slice() : null;
}

/** Why an IP literal may not be a webhook target (e.g. "loopback"), or null if it is public. */
export function blockedAddressClass(ip: string): string | null {
  const s = strip(ip);
  // node:net decides what counts as a literal (dotted quads only: no "127.1", no hex).
  const family = isIP(s);
  try {
    if (family === 4) return v4Class(ipaddr.IPv4.parse(s));
    if (family === 6) return v6Class(ipaddr.IPv6.parse(canonicalV6(s) ?? s));
  } catch {
    // isIP and ipaddr.js disagree: refuse what cannot be judged.
  }
  return "unparseable";
}

export type Resolution =
  | { ok: true; addresses: string[] }
  | { ok: false; code: "private_address" | "not_public" | "unresolvable"; message: string };

/**
 * Resolves the URL's host (an IP literal is used as is) and checks every address unless
 * `allowPrivate`. `signal` bounds the lookup (the attempt's timeout covers DNS too).
 *
 * A host name that does not resolve and one that resolves to a private address get the same
 * answer: told apart, they let an org admin map the names the server's own resolver knows
 * (`db.internal` resolves, `nothing.internal` does not), and which kind of address each has.
 * With private targets allowed there is nothing to hide: a name that does not resolve says so.
 */
export async function resolveTarget(
  url: URL,
  allowPrivate: boolean,
  signal?: AbortSignal,
): Promise<Resolution> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const literal = isIP(host) !== 0;
  const notPublic: Resolution = {
    ok: false,
    code: "not_public",
    message: `The host name "${host}" does not resolve to a public address; webhook targets must be public unless ASSAY_WEBHOOK_ALLOW_PRIVATE=true.`,
  };
  let addresses: string[];
  if (literal) addresses = [host];
  else {
    try {
      const found = lookup(host, { all: true, verbatim: true });
      const aborted = new Promise<never>((_, reject) => {
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
      addresses = (await Promise.race([found, aborted])).map((a) => a.address);
    } catch (e) {
      if (signal?.aborted) throw e;
      addresses = [];
    }
    if (!addresses.length)
      return allowPrivate
        ? { ok: false, code: "unresolvable", message: `The host name "${host}" does not resolve.` }
        : notPublic;
  }
  if (!allowPrivate) {
    for (const a of addresses) {
      const why = blockedAddressClass(a);
      if (why && !literal) return notPublic;
      if (why)
        return {
          ok: false,
          code: "private_address",
          message: `The URL points at a non-public address (${why}); webhook targets must be public unless ASSAY_WEBHOOK_ALLOW_PRIVATE=true.`,
        };
    }
  }
  return { ok: true, addresses };
}
