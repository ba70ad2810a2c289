// Found by the pentest of 2026-11-30: fn:trace() wrote to the server's standard output (fontoxpath
// logs with console.log unless given a logger), so any Author could write lines of their choosing
// into the server's log from a rule: a label with a line break forged a JSON log line
// (`{"level":"error",…}`), and `trace((1 to 10000000) ! 'x')` wrote ten million lines a run. Now
// trace() returns its value and writes nothing, however it is named.
import { afterEach, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { loadLibxml } from "../../../src/validators/shared/libxml.ts";
import { run } from "./helpers.ts";

beforeAll(() => loadLibxml());

const sch = (select: string) =>
  `<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2"><sch:pattern><sch:rule context="/a"><sch:report test="true()"><sch:value-of select="${select}"/></sch:report></sch:rule></sch:pattern></sch:schema>`;

let spies: Array<ReturnType<typeof spyOn>> = [];
afterEach(() => {
  for (const s of spies) s.mockRestore();
  spies = [];
});

describe("trace() writes nothing to the server's output", () => {
  test.each([
    ["count(trace((1 to 3) ! 'FORGED', '&#10;{&quot;level&quot;:&quot;error&quot;}'))", "3"],
    ["string-join(fn:trace(('a', 'b'), 'label'), '')", "ab"],
    ["trace#2('x', 'label')", "x"],
    ["'y' => trace('label')", "y"],
    ["Q{http://www.w3.org/2005/xpath-functions}trace('z', 'label')", "z"],
  ])("%s", (select, value) => {
    const log = spyOn(console, "log").mockImplementation(() => {});
    const out = spyOn(process.stdout, "write").mockImplementation(() => true);
    spies = [log, out];
    const r = run("schematron", { schema: sch(select) }, "<a/>", "XML");
    expect(r.findings.map((f) => [f.code, f.message])).toEqual([["schematron.successful_report", value]]);
    expect(log).not.toHaveBeenCalled();
    expect(out).not.toHaveBeenCalled();
  });
});
