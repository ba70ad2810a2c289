// Well-known text (OGC Simple Features / ISO SQL/MM) geometries, for the string format "wkt":
// the syntax of every geometry type, with Z, M and ZM coordinates and EMPTY. Iterative enough:
// nesting is bounded by the grammar (GEOMETRYCOLLECTION excepted, capped at MAX_DEPTH).
const MAX_DEPTH = 32;
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

type Item = "point" | "points" | "rings" | "polygons" | "curve" | "curves" | "surfaces" | "collection";
/** What each geometry's parenthesised body holds. */
const BODY: Record<string, Item> = {
  POINT: "point",
  LINESTRING: "points",
  CIRCULARSTRING: "points",
  MULTIPOINT: "points",
  POLYGON: "rings",
  TRIANGLE: "rings",
  MULTILINESTRING: "rings",
  MULTIPOLYGON: "polygons",
  POLYHEDRALSURFACE: "polygons",
  TIN: "polygons",
  COMPOUNDCURVE: "curve",
  CURVEPOLYGON: "curves",
  MULTICURVE: "curves",
  MULTISURFACE: "surfaces",
  GEOMETRYCOLLECTION: "collection",
};

class Reader {
  private i = 0;
  constructor(private readonly t: string[]) {}
  peek() {
    return this.t[this.i];
  }
  next() {
    return this.t[this.i++];
  }
  eat(tok: string) {
    if (this.t[this.i] !== tok) return false;
    this.i++;
    return true;
  }
  done() {
    return this.i === this.t.length;
  }
}

/** Two to four numbers. */
function coords(r: Reader): boolean {
  let n = 0;
  while (n < 4 && NUMBER.test(r.peek() ?? "")) {
    r.next();
    n++;
  }
  return n >= 2;
}

/** "(" item ("," item)* ")" */
function list(r: Reader, item: () => boolean): boolean {
  if (!r.eat("(")) return false;
  do if (!item()) return false;
  while (r.eat(","));
  return r.eat(")");
}

const points = (r: Reader) => list(r, () => (r.eat("(") ? coords(r) && r.eat(")") : coords(r)));
const rings = (r: Reader) => list(r, () => list(r, () => coords(r)));

/** A member that may be a bare list or a named geometry of the given types. */
function member(r: Reader, bare: (r: Reader) => boolean, named: string[], depth: number): boolean {
  if (r.peek() === "(") return bare(r);
  const name = r.peek() ?? "";
  return named.includes(name) && geometry(r, depth + 1);
}

function body(r: Reader, kind: Item, depth: number): boolean {
  switch (kind) {
    case "point":
      return r.eat("(") && coords(r) && r.eat(")");
    case "points":
      return points(r);
    case "rings":
      return rings(r);
    case "polygons":
      return list(r, () => rings(r));
    case "curve":
      return list(r, () =>
        member(r, (x) => list(x, () => coords(x)), ["LINESTRING", "CIRCULARSTRING"], depth),
      );
    case "curves":
      return list(r, () =>
        member(r, (x) => list(x, () => coords(x)), ["LINESTRING", "CIRCULARSTRING", "COMPOUNDCURVE"], depth),
      );
    case "surfaces":
      return list(r, () => member(r, rings, ["POLYGON", "CURVEPOLYGON"], depth));
    case "collection":
      return list(r, () => geometry(r, depth + 1));
  }
}

function geometry(r: Reader, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  const kind = BODY[r.next() ?? ""];
  if (!kind) return false;
  const dim = r.peek();
  if (dim === "Z" || dim === "M" || dim === "ZM") r.next();
  if (r.eat("EMPTY")) return true;
  return body(r, kind, depth);
}

export function isWkt(raw: string): boolean {
  const text = raw.replace(/^\s*SRID=\d+;/i, "").toUpperCase();
  const tokens = text.match(/[A-Z]+|[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:E[+-]?\d+)?|\S/g);
  if (!tokens) return false;
  const r = new Reader(tokens);
  return geometry(r, 0) && r.done();
}
