// The pure helpers of `assay validate`: content types, reported names, Retry-After, verdicts,
// progress. The command itself is tested end to end in test/validate.test.ts.
import { describe, expect, test } from "bun:test";
import { UsageError } from "../../../src/cli/args.ts";
import { contentTypeOf, labelOf } from "../../../src/cli/validate/files.ts";
import { checkFilename, safeFilename } from "../../../src/runs/intake/filenames.ts";
import { createProgress } from "../../../src/cli/validate/progress.ts";
import { retryAfterMs } from "../../../src/cli/validate/remote.ts";
import { type FileResult, exitCode, verdictOf } from "../../../src/cli/validate/result.ts";
import { run } from "./fixtures.ts";

describe("content types", () => {
  test("from the extension, case-insensitive; --content-type wins", () => {
    expect(contentTypeOf("a/b.JSON", undefined)).toBe("application/json");
    expect(contentTypeOf("x.yml", undefined)).toBe("application/yaml");
    expect(contentTypeOf("x.tsv", undefined)).toBe("text/tab-separated-values");
    expect(contentTypeOf("x.bin", "text/csv; charset=latin1")).toBe("text/csv; charset=latin1");
  });
  test("an unknown or missing extension is a usage error", () => {
    expect(() => contentTypeOf("Makefile", undefined)).toThrow(UsageError);
    expect(() => contentTypeOf("a.exe", undefined)).toThrow("use --content-type");
  });
});

describe("reported names", () => {
  test("relative to the working directory when inside it, with forward slashes", () => {
    expect(labelOf("/repo/data/a.json", "/repo")).toBe("data/a.json");
    expect(labelOf("./data/../a.json", "/repo")).toBe("a.json");
    expect(labelOf("/elsewhere/a.json", "/repo")).toBe("/elsewhere/a.json");
    expect(labelOf("../a.json", "/repo")).toBe("../a.json");
  });
  test("a backslash on POSIX is part of the name, not a separator", () => {
    expect(labelOf("/repo/back\\slash.json", "/repo")).toBe("back\\slash.json");
  });
  test("the submission's name: what the server refuses in a filename becomes _", () => {
    expect(safeFilename("back\\slash.json")).toBe("back_slash.json");
    expect(safeFilename("tab\there\u202e.json")).toBe("tab_here_.json");
    expect(safeFilename("lone\ud800.json")).toBe("lone\ufffd.json");
    expect(safeFilename("..")).toBe("_");
    expect(safeFilename("größe.json")).toBe("größe.json");
    for (const name of ["back\\slash.json", "tab\there.json", "lone\ud800.json", ".."]) {
      const errors: unknown[] = [];
      expect(checkFilename(safeFilename(name), { maxFilenameLength: 255 }, errors as never)).not.toBeNull();
      expect(errors).toEqual([]);
    }
  });
});

describe("Retry-After", () => {
  test("seconds or an HTTP date, clamped between 0.1 s and 60 s", () => {
    expect(retryAfterMs("2")).toBe(2000);
    expect(retryAfterMs(null)).toBe(1000);
    expect(retryAfterMs("soon", 4)).toBe(4000);
    expect(retryAfterMs("0")).toBe(100);
    expect(retryAfterMs("86400")).toBe(60_000);
    const inFive = new Date(Date.now() + 5000).toUTCString();
    expect(retryAfterMs(inFive)).toBeGreaterThan(3000);
    expect(retryAfterMs(inFive)).toBeLessThanOrEqual(5000);
  });
});

describe("verdicts and the exit code", () => {
  const of = (status: string, warnings = 0): FileResult => {
    const r = run({ status });
    r.summary = { ...r.summary!, errors: 0, warnings };
    return { file: "f", contentType: "application/json", run: r, error: null };
  };
  const refused: FileResult = {
    file: "f",
    contentType: "text/csv",
    run: null,
    error: { status: 415, code: "unsupported_media_type", detail: "no", errors: [] },
  };
  test("0 all succeeded, 1 any failed, 2 any not validated — 2 wins over 1", () => {
    expect(exitCode([of("succeeded"), of("succeeded", 3)], "error")).toBe(0);
    expect(exitCode([of("succeeded"), of("failed")], "error")).toBe(1);
    expect(exitCode([of("failed"), refused], "error")).toBe(2);
    for (const s of ["error", "timed_out", "canceled"]) expect(exitCode([of(s)], "error")).toBe(2);
  });
  test("--fail-on warning fails a succeeded run that warned", () => {
    expect(verdictOf(of("succeeded", 1), "warning")).toBe("failed");
    expect(verdictOf(of("succeeded", 0), "warning")).toBe("succeeded");
    expect(exitCode([of("succeeded", 1)], "warning")).toBe(1);
  });
});

describe("progress", () => {
  const stream = (isTTY: boolean) => {
    const written: string[] = [];
    return { isTTY, written, write: (s: string) => written.push(s) };
  };
  test("on a terminal, one line rewritten per file, cleared at the end", () => {
    const tty = stream(true);
    const p = createProgress(3, tty);
    p.done("a.json");
    p.done("b.json");
    p.end();
    expect(tty.written).toEqual([
      "\r\x1b[2Kvalidating 3 files…",
      "\r\x1b[2K[1/3] a.json",
      "\r\x1b[2K[2/3] b.json",
      "\r\x1b[2K",
    ]);
  });
  test("a file name's control characters are shown, not obeyed", () => {
    const tty = stream(true);
    createProgress(2, tty).done("data/\u001b[2J\u009bx.json");
    expect(tty.written[1]).toBe("\r\x1b[2K[1/2] data/\\x1b[2J\\x9bx.json");
  });
  test("quiet when not a terminal, and for a single file", () => {
    const pipe = stream(false);
    createProgress(5, pipe).done("a");
    const one = stream(true);
    createProgress(1, one).done("a");
    expect([...pipe.written, ...one.written]).toEqual([]);
  });
});
