// User rules shared by the admin API and the CLI.
import type { Actor } from "../audit/types.ts";
import { type Problem, invalidBecause, invalidField, throwProblems } from "../errors.ts";
import { NAME_CHARACTERS, charCount, nameCharactersOk } from "../lib/text.ts";
import { hashPassword } from "./password-hash.ts";
import { passwordLengthProblem, passwordProblem } from "./password-policy.ts";
import type { UserStore } from "./store.ts";

const USERNAME_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
export { MIN_PASSWORD } from "./password-policy.ts";

export function usernameProblem(u: string): Problem | null {
  return USERNAME_RE.test(u)
    ? null
    : invalidBecause(
        "A username is 1 to 64 characters: letters, digits, . _ @ -, starting with a letter or digit.",
      );
}
/**
 * A new user's password, for a body that holds the username beside it (the admin API, the setup
 * form): passwordProblem with that username, or, when the username is absent or of the wrong type,
 * the one check that does not read it (its length comes first in passwordProblem too).
 */
export function newPasswordProblem(p: string, siblings: Record<string, unknown>): Problem | null {
  const problem =
    typeof siblings.username === "string" ? passwordProblem(p, siblings.username) : passwordLengthProblem(p);
  return problem ? invalidBecause(problem) : null;
}
/** An address as a user's email (empty: none). */
export function emailProblem(email: string): Problem | null {
  // Control characters too: a NUL was stored on SQLite and a generic 400 on PostgreSQL.
  // 254 characters (code points, as the document's maxLength counts: BOUNDS.email).
  return email && (charCount(email) > 254 || !/^[^@\s]+@[^@\s]+$/.test(email) || !nameCharactersOk(email))
    ? invalidBecause("Not an email address.")
    : null;
}
/**
 * A user's display name. Its length was the admin API's body schema alone (Chars(200)): `assay
 * users create --name` stored any length.
 */
export function userNameProblem(name: string): Problem | null {
  if (charCount(name) > 200) return invalidBecause("A name of at most 200 characters.");
  return nameCharactersOk(name) ? null : invalidBecause(`A name ${NAME_CHARACTERS}.`);
}
/** 400 on `password` when the password is not acceptable for `username` (password-policy.ts). */
export function checkPassword(p: string, username: string) {
  const problem = passwordProblem(p, username);
  if (problem) throw invalidField("password", problem);
}

export async function createUser(
  users: UserStore,
  u: { username: string; password?: string | null; name?: string; email?: string; is_admin?: boolean },
  actor: Actor,
) {
  // Every problem of the new user at once, in the body's order (was the first one only).
  const password = u.password == null ? null : passwordProblem(u.password, u.username);
  throwProblems([
    ["username", usernameProblem(u.username)],
    ["password", password === null ? null : invalidBecause(password)],
    ["name", u.name === undefined ? null : userNameProblem(u.name)],
    ["email", u.email === undefined ? null : emailProblem(u.email)],
  ]);
  const password_hash = u.password != null ? await hashPassword(u.password) : null;
  const { password: _, ...fields } = u;
  return users.create({ ...fields, password_hash }, actor);
}
