// Absolute URLs for Location, next and previous: ASSAY_BASE_URL when set (behind a proxy),
// otherwise the origin the request was addressed to.
// The origin depends on the scheme and authority only, and requests keep arriving for the same
// one: the last prefix's origin is kept instead of parsing every URL (~1 % of a sync run).
let lastPrefix = "";
let lastOrigin = "";
export function publicOrigin(baseUrl: string | null, request: Request): string {
  if (baseUrl) return baseUrl;
  const url = request.url;
  const authority = url.indexOf("//");
  const end = authority < 0 ? -1 : url.indexOf("/", authority + 2);
  const prefix = end < 0 ? url : url.slice(0, end);
  if (prefix !== lastPrefix) {
    lastOrigin = new URL(url).origin;
    lastPrefix = prefix;
  }
  return lastOrigin;
}

export function publicUrl(baseUrl: string | null, request: Request): string {
  const u = new URL(request.url);
  return publicOrigin(baseUrl, request) + u.pathname + u.search;
}
