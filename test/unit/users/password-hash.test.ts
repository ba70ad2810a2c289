// verifyPassword (src/users/password-hash.ts): which form matched, and the work it does. The work
// is what timing can reveal, so it is counted (argon2 verifications), not timed: a wrong password
// costs the same for a known user, an unknown one and one without a password, and depends only on
// whether what was sent changes under NFKC — which the sender knows already.
import { afterEach, beforeAll, expect, spyOn, test } from "bun:test";
import { hashPassword, verifyPassword } from "../../../src/users/password-hash.ts";

const DECOMPOSED = "A\u030angstro\u0308m units"; // NFKC: "\u00c5ngstr\u00f6m units"
const ASCII = "plain ascii words";
let nfkcHash: string;
let rawHash: string;
let asciiHash: string;

beforeAll(async () => {
  nfkcHash = await hashPassword(DECOMPOSED);
  rawHash = await Bun.password.hash(DECOMPOSED); // as stored before normalization
  asciiHash = await hashPassword(ASCII);
});

let spy: ReturnType<typeof spyOn> | null = null;
afterEach(() => {
  spy?.mockRestore();
  spy = null;
});

/** The answer and the number of argon2 verifications it took. */
async function counted(hash: string | null, password: string) {
  // Warm the dummy hash first so that its creation is not counted.
  await verifyPassword(null, "warm up");
  spy = spyOn(Bun.password, "verify");
  const answer = await verifyPassword(hash, password);
  const n = spy.mock.calls.length;
  spy.mockRestore();
  spy = null;
  return [answer, n];
}

test("the NFKC form's hash matches every spelling; a raw hash only the raw spelling", async () => {
  expect(await verifyPassword(nfkcHash, DECOMPOSED)).toBe("nfkc");
  expect(await verifyPassword(nfkcHash, DECOMPOSED.normalize("NFKC"))).toBe("nfkc");
  expect(await verifyPassword(rawHash, DECOMPOSED)).toBe("raw");
  expect(await verifyPassword(rawHash, DECOMPOSED.normalize("NFKC"))).toBe(false);
  expect(await verifyPassword(asciiHash, ASCII)).toBe("nfkc");
  expect(await verifyPassword(null, ASCII)).toBe(false);
  expect(await verifyPassword(undefined, "assay timing equaliser")).toBe(false);
});

test("a wrong password costs the same for a known user, an unknown one and one without a password", async () => {
  // A password that NFKC leaves alone: one verification, as before normalization.
  expect(await counted(asciiHash, "wrong words here")).toEqual([false, 1]);
  expect(await counted(nfkcHash, "wrong words here")).toEqual([false, 1]);
  expect(await counted(null, "wrong words here")).toEqual([false, 1]);
  // One that NFKC changes: both forms are tried, whoever the user is.
  const changes = "wrong \ufb01sh";
  expect(await counted(asciiHash, changes)).toEqual([false, 2]);
  expect(await counted(nfkcHash, changes)).toEqual([false, 2]);
  expect(await counted(rawHash, changes)).toEqual([false, 2]);
  expect(await counted(null, changes)).toEqual([false, 2]);
});

test("a right password costs one verification, or two when the stored hash is of the raw form", async () => {
  expect(await counted(nfkcHash, DECOMPOSED)).toEqual(["nfkc", 1]);
  expect(await counted(rawHash, DECOMPOSED)).toEqual(["raw", 2]);
});
