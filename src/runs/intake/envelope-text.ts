// Where each top-level member of a JSON object sits in its text. An envelope's object or array
// `content` is stored as the exact text the client sent: parsing and serializing it again changed
// the document (9007199254740993 became …992, 19.0 became 19, 1e400 null, a duplicate key lost
// with the warning the JSON validator gives for it).

export interface Member {
  /** The key, unescaped ("con\u0074ent" is "content"). */
  key: string;
  /** The value's text: text.slice(start, end), without the whitespace around it. */
  start: number;
  end: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * The top-level members of a JSON object's text, in order, duplicates included. Only for text
 * JSON.parse accepted (the scanner trusts the grammar: it finds boundaries, it does not validate);
 * null when the text is not an object. One pass, no recursion: nesting is counted.
 */
export function topLevelMembers(text: string): Member[] | null {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return null;
  i = skipSpace(text, i + 1);
  const members: Member[] = [];
  if (text.charCodeAt(i) === 0x7d) return members;
  for (;;) {
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, skipSpace(text, keyEnd) + 1); // past the colon
    const start = i;
    i = valueEnd(text, i);
    members.push({ key, start, end: i });
    i = skipSpace(text, i);
    if (text.charCodeAt(i) === 0x7d) return members;
    i = skipSpace(text, i + 1); // past the comma
  }
}

function skipSpace(text: string, i: number): number {
  while (isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index after the string that opens at `i`. */
function stringEnd(text: string, i: number): number {
  for (let q = text.indexOf('"', i + 1); ; q = text.indexOf('"', q + 1)) {
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
  }
}

/** The index after the value that starts at `i`. */
function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c !== 0x7b && c !== 0x5b) {
    // A number, true, false or null: it runs to the next delimiter.
    while (i < text.length && !isDelimiter(text.charCodeAt(i))) i++;
    return i;
  }
  let depth = 0;
  for (; i < text.length; i++) {
    const d = text.charCodeAt(i);
    if (d === QUOTE) i = stringEnd(text, i) - 1;
    else if (d === 0x7b || d === 0x5b) depth++;
    else if ((d === 0x7d || d === 0x5d) && --depth === 0) return i + 1;
  }
  return i;
}

const isDelimiter = (c: number) => c === 0x2c || c === 0x7d || c === 0x5d || isSpace(c);
