// The fast CSV reader must hand csv_table exactly the records csv-parse would: same cells, same
// offsets, same problem at the end. parseCsv (csv-parse + the locator) is the reference.
import { describe, expect, test } from "bun:test";
import {
  type CsvDialect,
  type CsvRecord,
  parseCsv,
  resolveDialect,
  scanCsv,
} from "../../../src/validators/shared/csv.ts";
import { fastReadable } from "../../../src/validators/shared/csv-fast.ts";
import { LineIndex } from "../../../src/validators/shared/position.ts";
import { random } from "../../helpers/random.ts";

type Scan = typeof scanCsv;
const pos = (line: number, column: number) => ({ line, column });

/** Every record the scan delivers (stopping after `stopAfter`), and the problem it returns. */
function trace(scan: Scan, text: string, dialect: CsvDialect, stopAfter = Infinity) {
  const records: CsvRecord[] = [];
  const problem = scan(text, dialect, (r) => {
    records.push(structuredClone(r));
    return records.length < stopAfter;
  });
  return { records, problem };
}

const reference: Scan = (text, dialect, onRecord) => parseCsv(text, dialect, onRecord, 0);

function expectSame(text: string, dialect = resolveDialect(text), stopAfter = Infinity) {
  expect(trace(scanCsv, text, dialect, stopAfter)).toEqual(trace(reference, text, dialect, stopAfter));
}

describe("fast CSV reader", () => {
  test("plain files, CRLF files, quotes, doubled quotes and line breaks inside quotes", () => {
    for (const text of [
      "id,name\n1,Ada\n2,Alan\n",
      "id,name\r\n1,Ada\r\n2,Alan",
      'a,"b,c","say ""hi"""\n"multi\nline",x,""\n',
      '"a\r\nb",c\r\n',
      "\ufeffid,name\n1,Ada\n",
      "\n\n,\n,,\n",
      "one",
      "",
      "a\tb\n1\t2\n",
      'é,😀\n"😀",é\n',
    ])
      expectSame(text);
  });

  test("a stray or unclosed quote: csv-parse reports it, records before it are not repeated", () => {
    for (const text of ['a,b\n1,2\n3,x"y\n4,5\n', 'a,b\n1,"2\n', 'a,b\n"1"x,2\n', 'a\n1\n"2"x\r\n']) {
      expectSame(text);
      const { records, problem } = trace(scanCsv, text, resolveDialect(text));
      expect(problem?.code).toBe("csv.syntax_error");
      expect(new Set(records.map((r) => r.number)).size).toBe(records.length);
    }
  });

  test("mixed line breaks, lone surrogates and odd dialects go to csv-parse", () => {
    expect(fastReadable("a\nb\r\nc", ",", '"')).toBe(false);
    expect(fastReadable("a\rb", ",", '"')).toBe(false);
    expect(fastReadable("a,\ud800\n", ",", '"')).toBe(false);
    expect(fastReadable("a\n", "😀", '"')).toBe(false);
    expect(fastReadable("a\r\nb\r\n", ",", '"')).toBe(true);
    for (const text of ["a\nb\r\nc\n", "a\rb\rc", "a,\ud800\nb,c\n", "x😀y\n1😀2\n"]) expectSame(text);
    expectSame("x😀y\n1😀2\n", { delimiter: "😀", quoteChar: '"', header: true });
  });

  test("mixed line breaks: every \\r\\n, \\n and lone \\r ends a record, at the offsets found", () => {
    const text = 'a,b\r\n1,x\n2,"y\rz"\r3,w\r\n\n4,v\r';
    const { records, problem } = trace(scanCsv, text, resolveDialect(text));
    expect(problem).toBeNull();
    expectSame(text);
    // A closing quote before "\r\n" in a file that began with "\n" closes the cell.
    expect(trace(scanCsv, 'a\n1\n"2"\r\n', resolveDialect("a")).problem).toBeNull();
    const lines = new LineIndex(text);
    expect(
      records.map((r) => ({
        cells: r.cells,
        at: r.cellStarts.map((o) => lines.position(o)),
        end: text.slice(r.end, r.end + 2),
      })),
    ).toEqual([
      { cells: ["a", "b"], at: [pos(1, 1), pos(1, 3)], end: "\r\n" },
      { cells: ["1", "x"], at: [pos(2, 1), pos(2, 3)], end: "\n2" },
      { cells: ["2", "y\rz"], at: [pos(3, 1), pos(3, 3)], end: "\r3" },
      { cells: ["3", "w"], at: [pos(5, 1), pos(5, 3)], end: "\r\n" },
      { cells: [""], at: [pos(6, 1)], end: "\n4" },
      { cells: ["4", "v"], at: [pos(7, 1), pos(7, 3)], end: "\r" },
    ]);
  });

  test("stopping early stops both alike", () => {
    expectSame("a\n1\n2\n3\n", undefined, 2);
  });

  test("random files agree with csv-parse record for record", () => {
    const next = random(11);
    const pieces = [
      "a",
      "b",
      ",",
      ",",
      '"',
      '"',
      "\n",
      "\n",
      "\r\n",
      "\r",
      " ",
      "é",
      "\t",
      ";",
      "'",
      "😀",
      '""',
    ];
    for (let n = 0; n < 5_000; n++) {
      let text = "";
      const len = Math.floor(next() * 16);
      const breaks = next(); // mostly one kind of line break, as real files have
      for (let i = 0; i < len; i++) {
        let p = pieces[Math.floor(next() * pieces.length)];
        if (breaks < 0.45 && p.includes("\r")) p = "\n";
        else if (breaks < 0.7 && (p === "\n" || p === "\r")) p = "\r\n";
        text += p;
      }
      const dialect =
        next() < 0.7 ? resolveDialect(text) : resolveDialect(text, { delimiter: ";", quoteChar: "'" });
      const stopAfter = next() < 0.2 ? 2 : Infinity;
      const fast = trace(scanCsv, text, dialect, stopAfter);
      const slow = trace(reference, text, dialect, stopAfter);
      // One string comparison per file; the readable diff only when they differ.
      if (JSON.stringify(fast) !== JSON.stringify(slow)) expect({ text, ...fast }).toEqual({ text, ...slow });
    }
  });
});
