// The audit log's CSV export against formula injection (OWASP "CSV Injection"). Names in the log
// come from users: any user names their own tokens, and the instance admin's export lists them.
// Found by the pentest of 2026-11-30: a cell was quoted only for `"`, `,` and line breaks, so a
// token named `x;=cmd|'/C calc'!A0;` was written bare, and a spreadsheet whose list separator is
// `;` (Excel in most European locales) split it into a cell `=cmd|'/C calc'!A0`, a formula.
// Quoting does not help there: that reader splits at every `;`, in quotes or not.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestServer, call, startTestServer } from "./helpers/server.ts";

let s: TestServer;
const NAMES = ["x;=cmd|'/C calc'!A0;", "=1+2", "y; +SUM(1)", 'z;"@A1', "w;-2+3"];

beforeAll(async () => {
  s = await startTestServer();
  const viewer = (await s.user("vik", "acme", "viewer")).token;
  for (const name of NAMES) {
    const r = await call(s, "POST", "/api/v1/users/me/tokens/", { token: viewer, body: { name } });
    expect(r.status).toBe(201);
  }
});
afterAll(() => s.close());

/** RFC 4180 cells of `text`, read with `sep` as a spreadsheet whose list separator it is would. */
function cells(text: string, sep: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"' && cell === "") quoted = true;
    else if (c === sep) {
      row.push(cell);
      cell = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      i++;
    } else cell += c;
  }
  return rows;
}

async function exported(): Promise<string> {
  const r = await fetch(`${s.url}/api/v1/admin/audit/?format=csv&action=token.create&actor=vik`, {
    headers: { authorization: `Bearer ${s.rootToken}` },
  });
  expect(r.status).toBe(200);
  return r.text();
}

describe("no cell of the CSV export starts a formula", () => {
  test.each([",", ";"])("read with %j as the separator", async (sep) => {
    const rows = cells(await exported(), sep);
    expect(rows.length).toBe(NAMES.length + 1);
    const formulas = rows.flat().filter((c) => /^[\s"]*[=+\-@]/.test(c));
    expect(formulas).toEqual([]);
  });

  test("each name is one cell, with an apostrophe before what could start a formula", async () => {
    const rows = cells(await exported(), ",");
    const at = rows[0]!.indexOf("target_name");
    expect(
      rows
        .slice(1)
        .map((r) => r[at])
        .sort(),
    ).toEqual(["x;'=cmd|'/C calc'!A0;", "'=1+2", "y;' +SUM(1)", "z;'\"@A1", "w;'-2+3"].sort());
  });
});
