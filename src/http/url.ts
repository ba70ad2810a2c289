// Absolute URLs for Location, next and previous: ASSAY_BASE_URL when set (behind a proxy),
// otherwise the origin the request was addressed to.
export function publicOrigin(baseUrl: string | null, request: Request): string {
  if (baseUrl) return baseUrl;
  return new URL(request.url).origin;
}

export function publicUrl(baseUrl: string | null, request: Request): string {
  const u = new URL(request.url);
  return publicOrigin(baseUrl, request) + u.pathname + u.search;
}
