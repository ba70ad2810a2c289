// The Prefer request header (RFC 7240): respond-async and wait=N (seconds).
export interface Preferences {
  respondAsync: boolean;
  waitSeconds: number | null;
}

/**
 * `wait` is delta-seconds of any length (the caller caps it; so many digits that the number is
 * Infinity is capped too). Of a preference given more than once only the first counts (RFC 7240
 * §2); several Prefer lines arrive joined with ", ", in order.
 */
export function parsePrefer(values: string | null): Preferences {
  const out: Preferences = { respondAsync: false, waitSeconds: null };
  if (!values) return out;
  const seen = new Set<string>();
  for (const raw of values.split(/[,;]/)) {
    const [name = "", value] = raw.split("=").map((x) => x.trim().toLowerCase());
    if (seen.has(name)) continue;
    seen.add(name);
    if (name === "respond-async") out.respondAsync = true;
    else if (name === "wait" && value && /^\d+$/.test(value.replace(/"/g, "")))
      out.waitSeconds = Number(value.replace(/"/g, ""));
  }
  return out;
}
