// The Prefer request header (RFC 7240): respond-async and wait=N (seconds).
export interface Preferences {
  respondAsync: boolean;
  waitSeconds: number | null;
}

export function parsePrefer(values: string | null): Preferences {
  const out: Preferences = { respondAsync: false, waitSeconds: null };
  if (!values) return out;
  for (const raw of values.split(/[,;]/)) {
    const [name, value] = raw.split("=").map((x) => x.trim().toLowerCase());
    if (name === "respond-async") out.respondAsync = true;
    else if (name === "wait" && value && /^\d{1,6}$/.test(value.replace(/"/g, "")))
      out.waitSeconds = Number(value.replace(/"/g, ""));
  }
  return out;
}
