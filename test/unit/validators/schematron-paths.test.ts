// A Schematron finding's path (src/validators/schematron/document.ts pathOf): `[n]` only where
// siblings of the same kind share the name, and each parent's children counted once, not once
// per finding — a rule failing on each of 20,000 siblings read them 400 million times.
import { describe, expect, test } from "bun:test";
import { type XNode, pathOf } from "../../../src/validators/schematron/document.ts";

/** A synthetic tree whose parents count how often their children are listed. */
function tree(children: { type: number; name: string }[]) {
  let reads = 0;
  const doc: XNode = { nodeType: 9, nodeName: "#document", parentNode: null, childNodes: [] };
  const kids: XNode[] = [];
  const root: XNode = {
    nodeType: 1,
    nodeName: "r",
    parentNode: doc,
    get childNodes() {
      reads++;
      return kids;
    },
  };
  doc.childNodes = [root];
  for (const c of children)
    kids.push({ nodeType: c.type, nodeName: c.name, parentNode: root, childNodes: [] });
  return { root, kids, reads: () => reads };
}

describe("Schematron finding paths", () => {
  test("[n] counts siblings of the same name and kind only", () => {
    const t = tree([
      { type: 1, name: "a" },
      { type: 3, name: "#text" },
      { type: 1, name: "b" },
      { type: 1, name: "a" },
      { type: 3, name: "#text" },
      { type: 8, name: "#comment" },
    ]);
    expect(t.kids.map(pathOf)).toEqual([
      "/r/a[1]",
      "/r/text()[1]",
      "/r/b",
      "/r/a[2]",
      "/r/text()[2]",
      "/r/comment()",
    ]);
    const attr: XNode = {
      nodeType: 2,
      nodeName: "id",
      parentNode: null,
      ownerElement: t.kids[3]!,
      childNodes: [],
    };
    expect(pathOf(attr)).toBe("/r/a[2]/@id");
    expect(pathOf(t.root)).toBe("/r");
  });

  test("a parent's children are listed once for the paths of all of them", () => {
    const t = tree(Array.from({ length: 20_000 }, () => ({ type: 1, name: "line" })));
    const paths = t.kids.map(pathOf);
    expect(paths[0]).toBe("/r/line[1]");
    expect(paths[19_999]).toBe("/r/line[20000]");
    expect(new Set(paths).size).toBe(20_000);
    expect(t.reads()).toBe(1);
  });
});
