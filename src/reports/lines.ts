// One finding as one line, the shape compilers and linters use (`file:line:column severity code
// message`), so editors and CI logs turn it into a link.
import type { Finding } from "../validators/types.ts";

export function location(file: string, f: Pick<Finding, "line" | "column">): string {
  if (f.line === null) return file;
  return f.column === null ? `${file}:${f.line}` : `${file}:${f.line}:${f.column}`;
}

/** Newlines in a message would break the one-finding-per-line promise. */
export const oneLine = (s: string) => s.replace(/\s*[\r\n]+\s*/g, " ").trim();

export function findingLine(file: string, f: Finding): string {
  return `${location(file, f)} ${f.severity} ${f.code} ${oneLine(f.message)}`;
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** "2 errors, 1 warning" — the counts that are not zero; "no findings" otherwise. */
export function countsText(s: { errors: number; warnings: number; infos: number } | null): string {
  if (!s) return "no findings";
  const parts = [
    s.errors ? plural(s.errors, "error") : "",
    s.warnings ? plural(s.warnings, "warning") : "",
    s.infos ? plural(s.infos, "info") : "",
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "no findings";
}
