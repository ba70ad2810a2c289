// How the dispatcher shares its free slots between tenants (security audit M2). Taking the
// globally oldest due deliveries let one org's backlog — 80 pings to a receiver that answers
// after 9.5 s — hold every slot while another org's delivery waited 44 s. Instead each endpoint
// and each org has a bound on attempts in flight (counted over every node: the claim reads the
// outbox), and a free slot goes to the org with the fewest attempts in flight, then within it to
// the endpoint with the fewest, the oldest due delivery breaking ties. An org with nothing in
// flight is served before one already sending, however old the other's backlog. Pure.

/** Attempts in flight to one endpoint at once: a receiver is never sent more than this. */
export const ENDPOINT_IN_FLIGHT = 4;
/** Attempts in flight for one org at once, over all its endpoints (at most 20). */
export const ORG_IN_FLIGHT = 8;

export interface Bounds {
  perEndpoint: number;
  perOrg: number;
}

export const DEFAULT_BOUNDS: Bounds = { perEndpoint: ENDPOINT_IN_FLIGHT, perOrg: ORG_IN_FLIGHT };

/** One endpoint with pending deliveries, as the outbox stands at the claim. */
export interface EndpointLoad {
  webhookId: number;
  orgId: number;
  /** Deliveries due now (counted up to perEndpoint: more are never taken at once). */
  due: number;
  /** Attempts in flight now, on any node. Counted against the org even when the endpoint is inactive. */
  busy: number;
  /** When its oldest due delivery became due (ISO 8601); null when none is. */
  oldest: string | null;
}

interface Slot {
  load: EndpointLoad;
  taken: number;
}

const cmp = (a: [number, string], b: [number, string]) =>
  a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);

/**
 * How many due deliveries to take from each endpoint, `room` in all: one at a time to the org
 * with the fewest in flight (then the oldest due), within it the endpoint likewise.
 */
export function shareClaims(
  loads: EndpointLoad[],
  room: number,
  b: Bounds = DEFAULT_BOUNDS,
): Map<number, number> {
  const orgs = new Map<number, { busy: number; slots: Slot[] }>();
  for (const load of loads) {
    const org = orgs.get(load.orgId) ?? { busy: 0, slots: [] };
    org.busy += load.busy;
    if (load.due > 0) org.slots.push({ load, taken: 0 });
    orgs.set(load.orgId, org);
  }
  const open = (s: Slot) => s.taken < s.load.due && s.load.busy + s.taken < b.perEndpoint;
  const key = (s: Slot): [number, string] => [s.load.busy + s.taken, s.load.oldest ?? ""];
  const shares = new Map<number, number>();
  for (let left = room; left > 0; left--) {
    let best: { org: { busy: number; slots: Slot[] }; slot: Slot; key: [number, string] } | null = null;
    for (const org of orgs.values()) {
      if (org.busy >= b.perOrg) continue;
      let pick: Slot | null = null;
      for (const s of org.slots) if (open(s) && (!pick || cmp(key(s), key(pick)) < 0)) pick = s;
      if (!pick) continue;
      const k: [number, string] = [org.busy, pick.load.oldest ?? ""];
      if (!best || cmp(k, best.key) < 0) best = { org, slot: pick, key: k };
    }
    if (!best) break;
    best.slot.taken++;
    best.org.busy++;
    shares.set(best.slot.load.webhookId, best.slot.taken);
  }
  return shares;
}
