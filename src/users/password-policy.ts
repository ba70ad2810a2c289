// What a new password must be (NIST SP 800-63B §5.1.1.2): 8 to 1024 characters, and not one an
// attacker tries first — a commonly used one, the username, one repeated character or a straight
// run of keys. No composition rules (a digit, a capital): 800-63B advises against them. The list
// is short on purpose: the passwords at the head of every published leak list (what online
// guessing tries within the sign-in limiter's budget), not a breach corpus.
import { NO_LONE_SURROGATES, charCount } from "../lib/text.ts";
import { normalizePassword } from "./password-hash.ts";

export const MIN_PASSWORD = 8;
export const MAX_PASSWORD = 1024;

const COMMON = new Set([
  "password",
  "password1",
  "password12",
  "password123",
  "password!",
  "passw0rd",
  "p@ssw0rd",
  "p@ssword",
  "iloveyou",
  "sunshine",
  "princess",
  "football",
  "baseball",
  "basketball",
  "superman",
  "starwars",
  "whatever",
  "trustno1",
  "letmein1",
  "letmein!",
  "welcome1",
  "welcome123",
  "admin123",
  "administrator",
  "changeme",
  "changeme1",
  "secret12",
  "secret123",
  "qwerty12",
  "qwerty123",
  "qwertyui",
  "qwertyuiop",
  "asdfghjk",
  "asdfghjkl",
  "zxcvbnm1",
  "1q2w3e4r",
  "1q2w3e4r5t",
  "q1w2e3r4",
  "1qaz2wsx",
  "zaq12wsx",
  "1qazxsw2",
  "qazwsxedc",
  "12341234",
  "123123123",
  "12344321",
  "11223344",
  "123qweasd",
  "abcd1234",
  "abc12345",
  "abc123456",
  "aa123456",
  "dragon12",
  "monkey12",
  "master12",
  "michael1",
  "shadow12",
  "jennifer",
  "computer",
  "internet",
  "samantha",
  "mercedes",
  "corvette",
  "liverpool",
  "chelsea1",
  "charlie1",
  "jordan23",
  "iloveyou1",
  "loveyou1",
  "mustang1",
  "access14",
  "freedom1",
  "flower12",
  "hello123",
  "hellohello",
  "football1",
  "baseball1",
  "batman12",
  "pokemon1",
  "minecraft",
  "default1",
  "guest123",
  "root1234",
  "toor1234",
  "test1234",
  "testtest",
  "testing1",
  "temp1234",
  "user1234",
  "login123",
  "assay123",
  "validation",
]);

/** Rows of a keyboard and the alphabet, where a straight run is one guess. */
const RUNS = ["0123456789", "abcdefghijklmnopqrstuvwxyz", "qwertyuiop", "asdfghjkl", "zxcvbnm", "1234567890"];

function straightRun(p: string): boolean {
  const l = p.toLowerCase();
  return RUNS.some((r) => {
    const both = [r, [...r].reverse().join("")];
    return both.some((s) => {
      // Cyclic: 90123456 and 78901234 are runs too.
      const twice = s + s;
      return l.length <= twice.length && twice.includes(l);
    });
  });
}

/**
 * The checks of passwordProblem that do not read the username, its first: the length, and no
 * unpaired surrogate (the hash is of its UTF-8, where U+FFFD stands in for each: "a\ud800…" and
 * "a\ufffd…" were one password). The most is counted as sent, which bounds the work before
 * anything else (NFKC makes at most 18 characters of one: 1024 sent, at most 18,432 hashed); the
 * least is counted in the NFKC form, the one hashed, so two spellings of one password get one
 * verdict ("Åbcdefg" with U+00C5 and with A + U+030A: 7 characters either way; "ﬁﬁﬁﬁ" and
 * "fifififi": 8).
 */
export function passwordLengthProblem(password: string): string | null {
  if (charCount(password) > MAX_PASSWORD || charCount(normalizePassword(password)) < MIN_PASSWORD)
    return `A password has ${MIN_PASSWORD} to ${MAX_PASSWORD} characters.`;
  return password.isWellFormed() ? null : `A password ${NO_LONE_SURROGATES}.`;
}

/**
 * Why `password` is refused for `username`, or null when it is acceptable. Judged in the NFKC form,
 * the one hashed: full-width "ｐａｓｓｗｏｒｄ" is "password".
 */
export function passwordProblem(password: string, username?: string): string | null {
  const length = passwordLengthProblem(password);
  if (length) return length;
  const hashed = normalizePassword(password);
  const l = hashed.toLowerCase();
  // Containing a name of four or more characters (alice2024); a shorter one only if it is all.
  const name = username?.toLowerCase();
  if (name !== undefined && (name.length >= 4 ? l.includes(name) : l === name))
    return "A password must not contain the username.";
  if (COMMON.has(l))
    return "This password is one of the most common; attackers try it first. Choose another.";
  if (new Set(l).size === 1 || straightRun(hashed))
    return "A password of one repeated character or a straight run of keys is tried first. Choose another.";
  return null;
}
