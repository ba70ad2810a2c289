// A run's id as a path gives it: a UUID, which is case-insensitive on input (RFC 9562 §4); ids
// are stored and answered in lower case, so an id in upper case (as some tools print UUIDs) names
// the same run instead of a 404.
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The run id a path segment names, in lower case; null when it is no UUID. */
export function runIdOf(param: string): string | null {
  const id = param.toLowerCase();
  return UUID_RE.test(id) ? id : null;
}
