// A URL as the CLI shows it in messages and report links: without user:password. A --server URL
// may carry credentials for a proxy in front of Assay (http://ciuser:secret@host); CI logs are
// read by more people than the secret store.

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
