/**
 * Text that looks like a URL, for a message that echoes what the operator gave: the password of
 * its userinfo and the values of its query masked (`***`), whatever characters they hold. A
 * password is often pasted raw, with `/`, `@` or `?` in it: the pattern both messages used before
 * (`[^@/]*@`) stopped at the first of those and showed the password, or its tail. Everything from
 * the first `:` after `//` to the last `@` counts as the password, so text after a misplaced `@`
 * may be masked too: a message can lose detail, never a secret.
 */
export function maskUrlText(v: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(v)?.[0];
  if (scheme === undefined) return v;
  let rest = v.slice(scheme.length);
  let head = "";
  const at = rest.lastIndexOf("@");
  if (at >= 0) {
    const colon = rest.indexOf(":");
    head = colon >= 0 && colon < at ? `${rest.slice(0, colon)}:***@` : rest.slice(0, at + 1);
    rest = rest.slice(at + 1);
  }
  const q = rest.indexOf("?");
  if (q >= 0)
    rest = `${rest.slice(0, q)}?${rest
      .slice(q + 1)
      .split("&")
      .map((p) => (p.includes("=") ? `${p.slice(0, p.indexOf("="))}=***` : p))
      .join("&")}`;
  return scheme + head + rest;
}
