// The dispatcher's fair share of free slots (src/webhooks/claim.ts): a pure function of the loads.
import { describe, expect, test } from "bun:test";
import { type EndpointLoad, shareClaims } from "../../../src/webhooks/claim.ts";

const load = (
  webhookId: number,
  orgId: number,
  due: number,
  busy = 0,
  oldest = "2026-01-01",
): EndpointLoad => ({
  webhookId,
  orgId,
  due,
  busy,
  oldest: due ? oldest : null,
});
const bounds = { perEndpoint: 4, perOrg: 8 };
const shares = (loads: EndpointLoad[], room: number) => Object.fromEntries(shareClaims(loads, room, bounds));

describe("shareClaims", () => {
  test("an endpoint gets at most its bound, less what it has in flight", () => {
    expect(shares([load(1, 1, 100)], 64)).toEqual({ 1: 4 });
    expect(shares([load(1, 1, 100, 3)], 64)).toEqual({ 1: 1 });
    expect(shares([load(1, 1, 100, 4)], 64)).toEqual({});
    expect(shares([load(1, 1, 2)], 64)).toEqual({ 1: 2 });
  });
  test("an org gets at most its bound over all its endpoints, in flight included", () => {
    const org = [1, 2, 3, 4].map((id) => load(id, 1, 100));
    expect(Object.values(shares(org, 64)).reduce((a, b) => a + b)).toBe(8);
    expect(shares(org, 64)).toEqual({ 1: 2, 2: 2, 3: 2, 4: 2 });
    // An inactive endpoint's attempts in flight (due 0) still count against its org.
    expect(shares([load(1, 1, 0, 4), load(2, 1, 0, 3), load(3, 1, 100)], 64)).toEqual({ 3: 1 });
  });
  test("a scarce slot goes to the org with the fewest in flight, however old the other's backlog", () => {
    const greedy = load(1, 1, 100, 3, "2026-01-01");
    const quiet = load(2, 2, 1, 0, "2026-06-01");
    expect(shares([greedy, quiet], 1)).toEqual({ 2: 1 });
    expect(shares([greedy, quiet], 2)).toEqual({ 1: 1, 2: 1 });
  });
  test("equal orgs take turns, the oldest due first", () => {
    const a = load(1, 1, 100, 0, "2026-02-01");
    const b = load(2, 2, 100, 0, "2026-01-01");
    expect(shares([a, b], 1)).toEqual({ 2: 1 });
    expect(shares([a, b], 3)).toEqual({ 1: 1, 2: 2 });
  });
  test("nothing to take, or no room, takes nothing", () => {
    expect(shares([], 64)).toEqual({});
    expect(shares([load(1, 1, 5)], 0)).toEqual({});
  });
});
