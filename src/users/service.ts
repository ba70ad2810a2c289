// User rules shared by the admin API and the CLI.
import type { Actor } from "../audit/types.ts";
import { invalidField } from "../errors.ts";
import { NAME_CHARACTERS, charCount, nameCharactersOk } from "../lib/text.ts";
import { passwordProblem } from "./password-policy.ts";
import type { UserStore } from "./store.ts";

const USERNAME_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
export { MIN_PASSWORD } from "./password-policy.ts";

export function checkUsername(u: string) {
  if (!USERNAME_RE.test(u))
    throw invalidField(
      "username",
      "A username is 1 to 64 characters: letters, digits, . _ @ -, starting with a letter or digit.",
    );
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
  checkUsername(u.username);
  if (u.password != null) checkPassword(u.password, u.username);
  if (u.name !== undefined && !nameCharactersOk(u.name))
    throw invalidField("name", `A name ${NAME_CHARACTERS}.`);
  // Control characters too: a NUL was stored on SQLite and a generic 400 on PostgreSQL.
  // 254 characters (code points, as the document's maxLength counts: BOUNDS.email).
  if (
    u.email &&
    (charCount(u.email) > 254 || !/^[^@\s]+@[^@\s]+$/.test(u.email) || !nameCharactersOk(u.email))
  )
    throw invalidField("email", "Not an email address.");
  const password_hash = u.password != null ? await Bun.password.hash(u.password) : null;
  const { password: _, ...fields } = u;
  return users.create({ ...fields, password_hash }, actor);
}
