// SSRF guard for webhook targets. A URL is resolved and refused when ANY of its addresses is
// not a public unicast address: an attacker controlling DNS can answer with one public and one
// internal address. The dispatcher then connects to the checked address itself (see
// deliver.ts), so a second DNS answer cannot swap in an internal one (DNS rebinding).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

type V4Range = [base: number, bits: number, label: string];

const v4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

// IANA special-purpose registry (RFC 6890 and successors), plus multicast and reserved.
const V4_BLOCKED: V4Range[] = [
  [v4(0, 0, 0, 0), 8, "unspecified"],
  [v4(10, 0, 0, 0), 8, "private"],
  [v4(100, 64, 0, 0), 10, "shared (carrier-grade NAT)"],
  [v4(127, 0, 0, 0), 8, "loopback"],
  [v4(169, 254, 0, 0), 16, "link-local (cloud metadata)"],
  [v4(172, 16, 0, 0), 12, "private"],
  [v4(192, 0, 0, 0), 24, "reserved"],
  [v4(192, 0, 2, 0), 24, "documentation"],
  [v4(192, 88, 99, 0), 24, "reserved"],
  [v4(192, 168, 0, 0), 16, "private"],
  [v4(198, 18, 0, 0), 15, "benchmarking"],
  [v4(198, 51, 100, 0), 24, "documentation"],
  [v4(203, 0, 113, 0), 24, "documentation"],
  [v4(224, 0, 0, 0), 4, "multicast"],
  [v4(240, 0, 0, 0), 4, "reserved"],
];

function parseV4(s: string): number | null {
  const parts = s.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  const [a, b, c, d] = parts.map(Number) as [number, number, number, number];
  return v4(a, b, c, d);
}

function v4Class(n: number): string | null {
  for (const [base, bits, label] of V4_BLOCKED) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === base) return label;
  }
  return null;
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or null. */
export function parseV6(input: string): number[] | null {
  let s = input.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const n = parseV4(tail[1]!);
    if (n === null) return null;
    s = `${s.slice(0, -tail[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const group = (h: string) => (h === "" ? [] : h.split(":"));
  const head = group(halves[0]!);
  const rest = halves.length === 2 ? group(halves[1]!) : [];
  const fill = 8 - head.length - rest.length;
  if (halves.length === 1 ? head.length !== 8 : fill < 0) return null;
  const all = [...head, ...Array(halves.length === 2 ? fill : 0).fill("0"), ...rest];
  if (all.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return null;
  return all.map((g) => Number.parseInt(g, 16));
}

function v6Class(g: number[]): string | null {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  const embedded = (hi: number, lo: number) => v4Class(((hi << 16) | lo) >>> 0);
  if (zeroUpTo(8)) return "unspecified";
  if (zeroUpTo(7) && g[7] === 1) return "loopback";
  if (zeroUpTo(5) && g[5] === 0xffff) return embedded(g[6]!, g[7]!); // IPv4-mapped
  if (zeroUpTo(6)) return "reserved"; // IPv4-compatible (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded(g[6]!, g[7]!); // NAT64 well-known prefix
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return "reserved"; // local-use NAT64
  if (g[0] === 0x100 && zeroUpTo(4)) return "reserved"; // discard-only (the first group is 0100)
  if (g[0] === 0x2001 && g[1] === 0) return "reserved"; // Teredo: tunnels to an IPv4 address
  if (g[0] === 0x2001 && g[1] === 0xdb8) return "documentation";
  if (g[0] === 0x2002) return embedded(g[1]!, g[2]!); // 6to4
  if ((g[0]! & 0xfe00) === 0xfc00) return "private (unique local)";
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0]! & 0xffc0) === 0xfec0) return "reserved"; // site-local (deprecated)
  if ((g[0]! & 0xff00) === 0xff00) return "multicast";
  return null;
}

/** Why an IP literal may not be a webhook target (e.g. "loopback"), or null if it is public. */
export function blockedAddressClass(ip: string): string | null {
  const family = isIP(ip.replace(/^\[|\]$/g, "").replace(/%.*$/, ""));
  if (family === 4) return v4Class(parseV4(ip)!);
  if (family === 6) {
    const g = parseV6(ip);
    return g ? v6Class(g) : "unparseable";
  }
  return "unparseable";
}

export type Resolution =
  | { ok: true; addresses: string[] }
  | { ok: false; code: "unresolvable" | "private_address"; message: string };

/**
 * Resolves the URL's host (an IP literal is used as is) and checks every address unless
 * `allowPrivate`. `signal` bounds the lookup (the attempt's timeout covers DNS too).
 */
export async function resolveTarget(
  url: URL,
  allowPrivate: boolean,
  signal?: AbortSignal,
): Promise<Resolution> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (isIP(host)) addresses = [host];
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
      return { ok: false, code: "unresolvable", message: `The host name "${host}" does not resolve.` };
  }
  if (!allowPrivate) {
    for (const a of addresses) {
      const why = blockedAddressClass(a);
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
