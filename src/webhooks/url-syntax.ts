// A webhook URL's checks that need no network: the service's (service.ts urlProblems) before it
// resolves the host, and the route schemas' (model.ts) for a body the schema refuses, so that its
// 400 lists them with the rest (src/http/errors.ts, boundItems). The host's resolution (SSRF
// check) needs the network: its problem comes on the next answer.
import { type Problem, invalidBecause } from "../errors.ts";
import { NAME_CHARACTERS, charCount, nameCharactersOk } from "../lib/text.ts";

/** A webhook URL's length, in characters (code points, as the document's maxLength counts). */
export const MAX_URL_LENGTH = 2048;

/** The URL's problem without resolving its host, or null. */
export function urlSyntaxProblem(raw: string): Problem | null {
  if (charCount(raw) > MAX_URL_LENGTH)
    return { code: "too_long", message: `The URL may hold at most ${MAX_URL_LENGTH} characters.` };
  // The URL parser drops surrounding spaces and any tab or newline; the stored URL would then
  // not be the one called. Refused instead of kept as sent.
  if (/\s/.test(raw) || [...raw].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    return invalidBecause("The URL may not contain spaces, tabs or other control characters.");
  // One line of text as a name is: a lone surrogate was stored as U+FFFD (not the URL sent), an
  // override as is (the URL shown read otherwise than the one called).
  if (!nameCharactersOk(raw)) return invalidBecause(`The URL ${NAME_CHARACTERS}.`);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return invalidBecause("The URL is not an absolute http(s) URL.");
  }
  if (u.protocol !== "https:" && u.protocol !== "http:")
    return invalidBecause("The URL must use https or http.");
  return null;
}
