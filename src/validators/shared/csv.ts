// CSV records with positions. The plain case is read by csv-fast.ts; otherwise csv-parse is the
// engine (values, quoting, syntax errors) and a small locator walks the same text in lockstep to
// find where each record and cell starts, because csv-parse reports line numbers only, and counts
// bytes rather than characters. Both end a record at "\r\n", "\n" and a lone "\r", even mixed.
import { CsvError, parse } from "csv-parse/sync";
import { MAX_CSV_COLUMNS, MAX_CSV_ROWS } from "../limits.ts";
import { fastReadable, readRecord } from "./csv-fast.ts";
import { gcPacer } from "./gc-pace.ts";
import { LineIndex, type Position } from "./position.ts";

export interface CsvDialect {
  delimiter: string;
  quoteChar: string;
  header: boolean;
}

export interface CsvRecord {
  /** 1-based record number in the file, header included (a spreadsheet's row number). */
  number: number;
  cells: string[];
  /** Character offset where the record starts, and where each cell starts. */
  start: number;
  cellStarts: number[];
  /** Offset just past the last cell (before the line break). */
  end: number;
}

export interface CsvProblem {
  code: "csv.syntax_error" | "csv.too_many_columns" | "csv.too_many_rows";
  message: string;
  position: Position;
}

/** Config dialect wins; otherwise "," unless the first line has tabs and no commas (TSV). */
export function resolveDialect(text: string, cfg: Partial<CsvDialect> = {}): CsvDialect {
  let delimiter = cfg.delimiter;
  if (delimiter === undefined) {
    const nl = text.search(/[\r\n]/);
    const first = nl < 0 ? text : text.slice(0, nl);
    delimiter = first.includes("\t") && !first.includes(",") ? "\t" : ",";
  }
  return { delimiter, quoteChar: cfg.quoteChar ?? '"', header: cfg.header ?? true };
}

interface Located {
  cellStarts: number[];
  end: number;
  next: number;
  problem?: { offset: number; kind: string };
}

/**
 * Walks one record from `start` the way RFC 4180 reads it. The delimiter and quote are one
 * character each, which may be two UTF-16 code units (an emoji): matched as strings, so that one
 * outside the Basic Multilingual Plane is found too (it was compared with a single code unit and
 * never matched: findings were reported on the wrong line).
 */
function locate(text: string, start: number, d: string, q: string): Located {
  const cellStarts = [start];
  const at = (s: string, i: number) => (s.length === 1 ? text[i] === s : text.startsWith(s, i));
  let i = start;
  for (;;) {
    if (at(q, i)) {
      const open = i;
      i += q.length;
      for (;;) {
        if (i >= text.length)
          return { cellStarts, end: i, next: i, problem: { offset: open, kind: "unclosed" } };
        if (at(q, i)) {
          if (at(q, i + q.length)) i += 2 * q.length;
          else break;
        } else i++;
      }
      i += q.length;
      const c = text[i];
      if (i < text.length && !at(d, i) && c !== "\n" && c !== "\r") {
        return { cellStarts, end: i, next: i, problem: { offset: i, kind: "after_quote" } };
      }
    } else {
      while (i < text.length && !at(d, i) && text[i] !== "\n" && text[i] !== "\r") {
        if (at(q, i)) return { cellStarts, end: i, next: i, problem: { offset: i, kind: "stray_quote" } };
        i++;
      }
    }
    if (i >= text.length) return { cellStarts, end: i, next: i };
    if (at(d, i)) {
      i += d.length;
      cellStarts.push(i);
      continue;
    }
    const next = text[i] === "\r" && text[i + 1] === "\n" ? i + 2 : i + 1;
    return { cellStarts, end: i, next };
  }
}

const MESSAGES: Record<string, string> = {
  unclosed: "quoted field is never closed",
  stray_quote: 'a quote inside an unquoted field; quote the whole field and double inner quotes ("")',
  after_quote: "unexpected character after a closing quote; expected a delimiter or the end of the line",
};

class Stop extends Error {}

/**
 * Feeds each record to `onRecord` (return false to stop early). Returns the syntax or limit
 * problem that ended the scan, or null. Records are not accumulated: memory stays flat.
 */
export function scanCsv(
  text: string,
  dialect: CsvDialect,
  onRecord: (r: CsvRecord) => boolean,
): CsvProblem | null {
  const { delimiter: d, quoteChar: q } = dialect;
  if (!fastReadable(text, d, q)) return parseCsv(text, dialect, onRecord, 0);
  const lines = new LineIndex(text);
  // The decoder took the byte order mark off (TextDecoder); a U+FEFF left is data, as a second
  // BOM is to Python's csv reading utf-8-sig (Frictionless's reader): part of the first cell.
  let cursor = 0;
  let count = 0;
  const pace = gcPacer();
  while (cursor < text.length) {
    pace(cursor);
    const r = readRecord(text, cursor, d, q);
    // csv-parse reads the file again for its message; the records read so far are not repeated.
    if (!r) return parseCsv(text, dialect, onRecord, count);
    const rec: CsvRecord = {
      number: ++count,
      cells: r.cells,
      start: cursor,
      cellStarts: r.cellStarts,
      end: r.end,
    };
    const limit = limitProblem(rec, lines);
    if (limit) return limit;
    if (!onRecord(rec)) return null;
    cursor = r.next;
  }
  return null;
}

function limitProblem(rec: CsvRecord, lines: LineIndex): CsvProblem | null {
  if (rec.number > MAX_CSV_ROWS)
    return {
      code: "csv.too_many_rows",
      message: `more than ${MAX_CSV_ROWS} records`,
      position: lines.position(rec.start),
    };
  if (rec.cells.length > MAX_CSV_COLUMNS) {
    const message = `record has ${rec.cells.length} cells; at most ${MAX_CSV_COLUMNS} are accepted`;
    return { code: "csv.too_many_columns", message, position: lines.position(rec.start) };
  }
  return null;
}

/**
 * scanCsv through csv-parse; the first `skip` records were already fed to `onRecord`. Exported
 * as the reference the fast reader is tested against.
 */
export function parseCsv(
  text: string,
  dialect: CsvDialect,
  onRecord: (r: CsvRecord) => boolean,
  skip: number,
): CsvProblem | null {
  const lines = new LineIndex(text);
  let cursor = 0;
  let count = 0;
  let limit: CsvProblem | null = null;
  const pace = gcPacer();
  try {
    parse(text, {
      delimiter: dialect.delimiter,
      quote: dialect.quoteChar,
      escape: dialect.quoteChar,
      // Left to itself, csv-parse adopts the first line break it meets as the only one, and a
      // file mixing them then has records (and positions, which the locator finds at every
      // break) a reader does not see. Python's csv module, Frictionless's reader, ends a record
      // at each of the three; "\r\n" first, so that it is one break and not two.
      record_delimiter: ["\r\n", "\n", "\r"],
      bom: false, // as the fast reader: see scanCsv
      relax_column_count: true, // ragged rows are a table problem (csv_table), not a syntax error
      skip_empty_lines: false,
      on_record: (cells: string[]) => {
        const loc = locate(text, cursor, dialect.delimiter, dialect.quoteChar);
        const rec: CsvRecord = {
          number: ++count,
          cells,
          start: cursor,
          cellStarts: loc.cellStarts,
          end: loc.end,
        };
        cursor = loc.next;
        pace(cursor);
        limit = limitProblem(rec, lines);
        if (limit) throw new Stop();
        if (count > skip && !onRecord(rec)) throw new Stop();
        return null;
      },
    });
  } catch (e) {
    if (e instanceof Stop) return limit;
    if (!(e instanceof CsvError)) throw e;
    const loc = locate(text, cursor, dialect.delimiter, dialect.quoteChar);
    const at = loc.problem?.offset ?? cursor;
    const message = (loc.problem && MESSAGES[loc.problem.kind]) ?? e.message;
    return { code: "csv.syntax_error", message, position: lines.position(at) };
  }
  return null;
}
