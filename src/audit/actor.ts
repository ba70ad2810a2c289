// Actors: built where the request (or the command) is known, passed down to every write.
import { readFileSync } from "node:fs";
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

/**
 * An `assay` command on the server's machine: the operating-system account that ran it, by its
 * user id: Bun's os.userInfo() reads the name from $USER ("unknown" without it: cron, systemd,
 * `docker exec`), which also names anyone. The id's name from the password database, else
 * "uid N"; userInfo() only where there are no user ids (Windows).
 */
export function cliActor(): Actor {
  return { type: "cli", user_id: null, username: accountName(), token_id: null, session_id: null, ip: null };
}

function accountName(): string | null {
  const uid = process.getuid?.();
  if (uid === undefined) {
    try {
      return userInfo().username;
    } catch {
      return null;
    }
  }
  return nameOfUid(uid, readPasswd()) ?? `uid ${uid}`;
}

function readPasswd(): string {
  try {
    return readFileSync("/etc/passwd", "utf8");
  } catch {
    return "";
  }
}

/** The name /etc/passwd gives a user id (`name:x:uid:…`), or null. */
export function nameOfUid(uid: number, passwd: string): string | null {
  for (const line of passwd.split("\n")) {
    const f = line.split(":");
    if (f.length >= 3 && f[2] === String(uid) && f[0]) return f[0];
  }
  return null;
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
