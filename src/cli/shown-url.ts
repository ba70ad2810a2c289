// The --server URL: read once for every command that talks to a server, and shown in messages
// and report links without user:password (a URL may still reach a message some other way; CI
// logs are read by more people than the secret store).
import { UsageError } from "./args.ts";

/**
 * --server as the base the API paths are appended to. A user:password in it is refused: the
 * requests' Authorization header carries the token, so those credentials could not be sent
 * (Bun's fetch dropped them silently; Node's refused every request and printed them).
 */
export function serverBase(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`--server "${raw}" is not a URL`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw new UsageError("--server is an http or https URL");
  if (u.username || u.password)
    throw new UsageError(
      `--server ${shownUrl(raw)} carries a user:password, which cannot be sent: the Authorization header carries the token. Remove it from the URL.`,
    );
  return u.href.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
}

/** `url` without its userinfo; anything that does not parse as a URL is returned unchanged. */
export function shownUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  if (!u.username && !u.password) return url;
  u.username = "";
  u.password = "";
  // URL.href of a base URL ends with "/": keep the caller's form (no slash when it had none).
  return url.endsWith("/") || u.pathname !== "/" ? u.href : u.href.replace(/\/$/, "");
}
