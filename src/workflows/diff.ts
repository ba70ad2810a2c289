// Field-by-field difference of two workflow versions (GET …/versions/{n}/diff/?against=m). Both
// sides are first put in one shape — the settings, and the steps keyed by their id (a step keeps
// its id across versions: a moved step is an `order` change, not a removal and an addition) —
// then compared. Paths are JSON Pointers into that shape: /name, /steps/12/order,
// /steps/12/config/schema/required/0.
import type { StepDef, WorkflowVersion } from "./types.ts";

export const MAX_CHANGES = 1000;
/**
 * The changes' paths in all, characters. Each change names its whole JSON Pointer, so 1000 leaves
 * changed under one deep spine of long keys repeated the spine 1000 times: a 490 KB workflow saved
 * twice answered 481 MB (docs/security.md). What else a diff holds (the values before and after)
 * is each part of a version at most once. The first change is listed whatever its length: one
 * path is no longer than the version it points into.
 */
export const MAX_DIFF_PATH_CHARS = 1_048_576;

/** Settings a version snapshot holds; the first four are absent from versions before 0016. */
export const SETTINGS = [
  "name",
  "description",
  "status",
  "retention_days",
  "slug",
  "allowed_file_types",
  "fail_fast",
] as const;

export interface Change {
  path: string;
  op: "added" | "removed" | "changed";
  before?: unknown;
  after?: unknown;
  /** The step a path under /steps belongs to (its name in the newer version, if it has it). */
  step: { id: number; name: string } | null;
}

export interface VersionDiff {
  changes: Change[];
  /** More than MAX_CHANGES changes, or paths past MAX_DIFF_PATH_CHARS: the list stops there. */
  truncated: boolean;
  /** Settings one of the versions did not record (saved before they were recorded). */
  unrecorded: string[];
}

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const pointerToken = (k: string) => k.replaceAll("~", "~0").replaceAll("/", "~1");
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

const stepShape = (s: StepDef) => ({
  order: s.order,
  name: s.name,
  validator: s.validator,
  is_active: s.is_active,
  config: s.config,
});

export function diffVersions(from: WorkflowVersion, to: WorkflowVersion): VersionDiff {
  const out: Change[] = [];
  let truncated = false;
  let pathChars = 0;
  const push = (c: Change) => {
    if (truncated) return;
    if (out.length >= MAX_CHANGES || (out.length > 0 && pathChars + c.path.length > MAX_DIFF_PATH_CHARS))
      truncated = true;
    else {
      out.push(c);
      pathChars += c.path.length;
    }
  };
  const unrecorded: string[] = [];
  for (const k of SETTINGS) {
    if (!(k in from) || !(k in to)) {
      unrecorded.push(k);
      continue;
    }
    const a = (from as unknown as Record<string, unknown>)[k];
    const b = (to as unknown as Record<string, unknown>)[k];
    // Settings are compared whole (allowed_file_types is one value, not a list of edits).
    if (!same(a, b)) push({ path: `/${k}`, op: "changed", before: a, after: b, step: null });
  }
  const older = new Map(from.steps.map((s) => [s.id, s]));
  const newer = new Map(to.steps.map((s) => [s.id, s]));
  const ids = [...new Set([...to.steps.map((s) => s.id), ...from.steps.map((s) => s.id)])];
  for (const id of ids) {
    const a = older.get(id);
    const b = newer.get(id);
    const step = { id, name: (b ?? a)!.name };
    if (!a) push({ path: `/steps/${id}`, op: "added", after: stepShape(b!), step });
    else if (!b) push({ path: `/steps/${id}`, op: "removed", before: stepShape(a), step });
    else
      walk(
        `/steps/${id}`,
        stepShape(a),
        stepShape(b),
        (c) => push({ ...c, step }),
        () => truncated,
      );
  }
  return { changes: out, truncated, unrecorded };
}

/**
 * Leaf by leaf inside objects and arrays (configs: a changed `required` entry, not the schema).
 * Each node is visited once: a whole-subtree comparison at every level cost size × depth, and a
 * deep config made one diff hold the event loop for a second. Keys are the values' own
 * (`Object.hasOwn`): a schema property named `constructor` is a key like any other.
 */
function walk(
  path: string,
  a: unknown,
  b: unknown,
  emit: (c: Omit<Change, "step">) => void,
  full: () => boolean,
): void {
  if (a === b || full()) return;
  const objects = isPlain(a) && isPlain(b);
  const arrays = Array.isArray(a) && Array.isArray(b);
  if (!objects && !arrays) {
    emit({ path, op: "changed", before: a, after: b });
    return;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = arrays
    ? Array.from({ length: Math.max((a as unknown[]).length, (b as unknown[]).length) }, (_, i) => String(i))
    : [...new Set([...Object.keys(x), ...Object.keys(y)])];
  for (const k of keys) {
    if (full()) return;
    const p = `${path}/${pointerToken(k)}`;
    if (!Object.hasOwn(y, k)) emit({ path: p, op: "removed", before: x[k] });
    else if (!Object.hasOwn(x, k)) emit({ path: p, op: "added", after: y[k] });
    else walk(p, x[k], y[k], emit, full);
  }
}
