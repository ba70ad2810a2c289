// Password hashing and checking, the one place that does either (API, web app, CLI, first run).
// A password is hashed in its NFKC form (NIST SP 800-63B §5.1.1.2: verifiers SHOULD normalize
// before hashing), so "Å" typed as U+00C5 or as A + U+030A, the ligature "ﬁ" and "fi", and
// full-width digits are one password whatever keyboard or input method sent them.
// Hashes stored before 2026-11-29 are of the raw string: a password whose NFKC form differs from
// what was sent is checked in both forms, and a match of the raw one is re-hashed (docs/security.md).

/** The form a password is hashed in. */
export const normalizePassword = (password: string): string => password.normalize("NFKC");

/** The argon2id hash (Bun.password) of a password's NFKC form. */
export const hashPassword = (password: string): Promise<string> =>
  Bun.password.hash(normalizePassword(password));

// Unknown users and users without a password cost the same verifications as a wrong password
// does, so the answer's timing does not tell which usernames exist.
let dummyHash: Promise<string> | null = null;
const dummy = () => {
  dummyHash ??= Bun.password.hash("assay timing equaliser");
  return dummyHash;
};

/**
 * Whether `password` matches `hash`: "nfkc" when the hash is of its NFKC form, "raw" when it is a
 * hash stored before normalization of the raw string (the caller re-hashes), false otherwise.
 * A wrong password costs one argon2 verification, or two when its NFKC form differs from it — the
 * same for a known user, an unknown one or one without a password, so timing tells no more than
 * the answer does; Bun.password.verify compares in constant time.
 */
export async function verifyPassword(
  hash: string | null | undefined,
  password: string,
): Promise<"nfkc" | "raw" | false> {
  const nfkc = normalizePassword(password);
  const forms = nfkc === password ? [nfkc] : [nfkc, password];
  const against = hash || (await dummy());
  for (const [i, form] of forms.entries()) {
    if ((await Bun.password.verify(form, against)) && hash) return i === 0 ? "nfkc" : "raw";
  }
  return false;
}
