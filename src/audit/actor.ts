// Actors: built where the request (or the command) is known, passed down to every write.
import { userInfo } from "node:os";
import type { Principal } from "../http/auth.ts";
import type { Actor } from "./types.ts";

export function actorOf(p: Principal, ip: string | null): Actor {
  return {
    type: "user",
    user_id: p.user.id,
    username: p.user.username,
    token_id: p.token?.id ?? null,
    session_id: p.session?.id ?? null,
    ip,
  };
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
