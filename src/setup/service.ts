// The first run, shared by `assay init` and the web app's setup form: every input is checked
// before anything is written (all problems reported at once), then one transaction writes it all
// (store.ts). The web form is guarded by a one-time setup code printed in the server's log, as
// PocketBase guards its first superuser: only whoever reads the log can claim the instance.
import { randomInt, timingSafeEqual } from "node:crypto";
import { type ErrorItem, type Problem, conflict, invalid } from "../errors.ts";
import { deletedSlugMessage, orgNameProblem, orgSlugProblem } from "../orgs/service.ts";
import { newToken } from "../tokens/secret.ts";
import { hashPassword } from "../users/password-hash.ts";
import { MAX_PASSWORD, MIN_PASSWORD, passwordProblem } from "../users/password-policy.ts";
import { usernameProblem } from "../users/service.ts";
import type { Actor } from "../audit/types.ts";
import type { SetupStore } from "./store.ts";
/** No 0/O, 1/I/L: the code is read off a log and typed by a person. */
const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

export interface FirstRunInput {
  org_slug: string;
  org_name?: string;
  username: string;
  /** Required for the web form; `assay init` may create an admin without one (tokens only). */
  password: string | null;
}

/** A one-time code such as 7KQ4-MZ9P (40 bits): guessing it is slower than the rate limit allows. */
export function newSetupCode(): string {
  const pick = () => Array.from({ length: 4 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
  return `${pick()}-${pick()}`;
}

/** Case and dashes do not matter; compared in constant time. */
export function codeMatches(expected: string, given: string): boolean {
  const norm = (s: string) => Buffer.from(s.toUpperCase().replace(/[^A-Z0-9]/g, ""));
  const a = norm(expected);
  const b = norm(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The problems seen without the database (the CLI checks these before it creates a data dir). */
export function inputProblems(i: FirstRunInput, passwordRequired: boolean): ErrorItem[] {
  const out: ErrorItem[] = [];
  const add = (field: string, p: Problem | null) => p && out.push({ field, ...p });
  add("org_slug", orgSlugProblem(i.org_slug));
  if (i.org_name !== undefined) add("org_name", orgNameProblem(i.org_name));
  add("username", usernameProblem(i.username));
  const password =
    i.password === null
      ? passwordRequired
        ? `A password has ${MIN_PASSWORD} to ${MAX_PASSWORD} characters.`
        : null
      : passwordProblem(i.password, i.username);
  if (password) out.push({ field: "password", code: "invalid", message: password });
  return out;
}

export const FIRST_RUN_INVALID = "The first administrator and organization cannot be created.";

export function createSetupService(store: SetupStore) {
  const already = () =>
    conflict("This instance is already set up; sign in, or use `assay users` and `orgs`.");

  /** Every problem with the input, none written. */
  async function problems(i: FirstRunInput, passwordRequired: boolean): Promise<ErrorItem[]> {
    const out = inputProblems(i, passwordRequired);
    if (!out.some((e) => e.field === "org_slug")) {
      const holder = await store.slugHolder(i.org_slug);
      if (holder)
        out.push({
          field: "org_slug",
          code: "unique",
          message: holder.deleted_at
            ? deletedSlugMessage(i.org_slug)
            : `The organization slug "${i.org_slug}" is taken.`,
        });
    }
    return out;
  }

  return {
    /** True while the instance has no user: the web app offers the setup form. */
    async needed(): Promise<boolean> {
      return (await store.userCount()) === 0;
    },
    /**
     * Creates the first admin and org (and, with `withToken`, an API token). 409 when the instance
     * has a user; 400 with every problem when the input is wrong; nothing written on either.
     */
    async run(i: FirstRunInput, opts: { withToken: boolean; passwordRequired: boolean }, actor: Actor) {
      if ((await store.userCount()) > 0) throw already();
      const errors = await problems(i, opts.passwordRequired);
      if (errors.length) throw invalid(FIRST_RUN_INVALID, errors);
      const password_hash = i.password === null ? null : await hashPassword(i.password);
      const secret = opts.withToken ? newToken() : null;
      const created = await store.create(
        {
          org: { slug: i.org_slug, name: i.org_name?.trim() || i.org_slug },
          admin: { username: i.username, password_hash },
          token: secret ? { name: "init", prefix: secret.prefix, digest: secret.digest } : undefined,
        },
        actor,
      );
      if (!created) throw already();
      return { ...created, token: secret?.token ?? null };
    },
  };
}
export type SetupService = ReturnType<typeof createSetupService>;
