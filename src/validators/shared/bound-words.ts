// typebox words a length or count bound in the plural whatever the bound ("must not have more
// than 1 characters"): with a bound of 1 the word is singular. Used where its messages reach a
// client: a step config's shape check and a JSON Schema step's findings.

const NOUNS: Record<string, [string, string]> = {
  maxLength: ["more than", "character"],
  minLength: ["fewer than", "character"],
  maxItems: ["more than", "item"],
  minItems: ["fewer than", "item"],
  maxProperties: ["more than", "property"],
  minProperties: ["fewer than", "property"],
};

/** typebox's message, with the noun singular when the keyword's bound is 1. */
export function boundMessage(e: {
  keyword: string;
  params: Record<string, unknown>;
  message: string;
}): string {
  const words = NOUNS[e.keyword];
  if (!words || e.params.limit !== 1) return e.message;
  return `must not have ${words[0]} 1 ${words[1]}`;
}

/** "1 line", "2 lines": a count the server writes into a message. */
export const counted = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
