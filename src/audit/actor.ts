// Actors: built where the request (or the command) is known, passed down to every write.
import { userInfo } from "node:os";
import type { Principal } from "../http/auth.ts";
import type { Actor } from "./types.ts";

/**
 * `ip` may be a function: every authenticated request gets an actor, few write anything, and
 * asking the socket for its peer cost ~2 % of a sync run (which writes no audit entry). The
 * address is then read on first use, once.
 */
export function actorOf(p: Principal, ip: string | null | (() => string | null)): Actor {
  const base = {
    type: "user" as const,
    user_id: p.user.id,
    username: p.user.username,
    token_id: p.token?.id ?? null,
    session_id: p.session?.id ?? null,
  };
  if (typeof ip !== "function") return { ...base, ip };
  let known: string | null | undefined;
  return Object.defineProperty(base, "ip", {
    enumerable: true,
    get: () => {
      if (known === undefined) known = ip();
      return known;
    },
  }) as Actor;
}

/** Someone not signed in (a sign-in attempt): the username they typed, if any. */
export const anonymousActor = (ip: string | null, username: string | null = null): Actor => ({
  type: "anonymous",
  user_id: null,
  username,
  token_id: null,
  session_id: null,
  ip,
});

/** An `assay` command on the server's machine: the operating-system account that ran it. */
export function cliActor(): Actor {
  let who: string | null = null;
  try {
    who = userInfo().username;
  } catch {
    who = process.env.USER ?? null;
  }
  return { type: "cli", user_id: null, username: who, token_id: null, session_id: null, ip: null };
}

/** The server acting on its own (the retention sweep). */
export const SYSTEM: Actor = Object.freeze({
  type: "system",
  user_id: null,
  username: null,
  token_id: null,
  session_id: null,
  ip: null,
});
