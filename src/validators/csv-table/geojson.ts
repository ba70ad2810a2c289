// The structure of GeoJSON (RFC 7946) and TopoJSON objects, for the geojson field type: types,
// required members and the shape of coordinates. Geometry semantics (closed rings, winding) are
// not checked, as Frictionless does not check them either.
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isNum = (v: unknown) => typeof v === "number" && Number.isFinite(v);
const arrayOf = (v: unknown, item: (x: unknown) => boolean, min = 0) =>
  Array.isArray(v) && v.length >= min && v.every(item);

const position = (v: unknown) => arrayOf(v, isNum, 2);
const line = (v: unknown) => arrayOf(v, position, 2);
const ring = (v: unknown) => arrayOf(v, position, 4);
const polygon = (v: unknown) => arrayOf(v, ring);

const COORDINATES: Record<string, (v: unknown) => boolean> = {
  Point: position,
  MultiPoint: (v) => arrayOf(v, position),
  LineString: line,
  MultiLineString: (v) => arrayOf(v, line),
  Polygon: polygon,
  MultiPolygon: (v) => arrayOf(v, polygon),
};

function geometry(v: unknown): boolean {
  if (!isObj(v) || typeof v.type !== "string") return false;
  if (v.type === "GeometryCollection") return arrayOf(v.geometries, geometry);
  const shape = COORDINATES[v.type];
  return shape?.(v.coordinates) === true;
}

function feature(v: unknown): boolean {
  return (
    isObj(v) &&
    v.type === "Feature" &&
    "geometry" in v &&
    (v.geometry === null || geometry(v.geometry)) &&
    "properties" in v &&
    (v.properties === null || isObj(v.properties))
  );
}

export function isGeojson(v: Obj): boolean {
  if (v.type === "Feature") return feature(v);
  if (v.type === "FeatureCollection") return arrayOf(v.features, feature);
  return geometry(v);
}

const arcs =
  (depth: number) =>
  (v: unknown): boolean =>
    depth === 0 ? Number.isInteger(v) : arrayOf(v, arcs(depth - 1));

const TOPO_GEOMETRY: Record<string, (g: Obj) => boolean> = {
  Point: (g) => position(g.coordinates),
  MultiPoint: (g) => arrayOf(g.coordinates, position),
  LineString: (g) => arcs(1)(g.arcs),
  MultiLineString: (g) => arcs(2)(g.arcs),
  Polygon: (g) => arcs(2)(g.arcs),
  MultiPolygon: (g) => arcs(3)(g.arcs),
  GeometryCollection: (g) => arrayOf(g.geometries, topoGeometry),
};

function topoGeometry(v: unknown): boolean {
  if (!isObj(v) || typeof v.type !== "string") return false;
  const check = TOPO_GEOMETRY[v.type];
  return check?.(v) === true;
}

/** A TopoJSON Topology, or one of its geometry objects. */
export function isTopojson(v: Obj): boolean {
  if (v.type === "Topology")
    return isObj(v.objects) && Object.values(v.objects).every(topoGeometry) && arrayOf(v.arcs, line);
  return topoGeometry(v);
}
