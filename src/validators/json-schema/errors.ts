// typebox errors → findings. typebox reports every failed branch of anyOf/oneOf and aggregate
// errors (additionalProperties lists names); users want one finding per real problem, placed on
// the offending value or key. `rule` is the keyword's location along the evaluation path, with
// the `$ref`s it went through (ref-paths.ts: the errors come from the slotted copy).
import { headOf } from "../../lib/text.ts";
import { boundMessage } from "../shared/bound-words.ts";
import { finding, pointerJoin } from "../shared/findings.ts";
import type { Position } from "../shared/position.ts";
import type { Finding } from "../types.ts";
import { evaluationPath } from "./ref-paths.ts";
import { keywordsAlong, lastKeyword } from "./walk.ts";

export interface TbError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

/** Maps a pointer to a position; `key` asks for the property name rather than its value. */
export type Locate = (pointer: string, key: boolean) => Position | null;

/** Keywords whose failing branches are speculative: only the keyword's own error is kept. */
const SPECULATIVE: Record<string, string[]> = {
  anyOf: ["anyOf/"],
  oneOf: ["oneOf/"],
  not: ["not"],
  contains: ["contains"],
  if: ["if", "then", "else"],
};
/** Aggregates that list names; expanded to one finding per name unless a child error explains it. */
const NAME_LISTS: Record<string, string> = {
  additionalProperties: "is not allowed (additionalProperties)",
  unevaluatedProperties: "is not allowed (unevaluatedProperties)",
  propertyNames: "is not a valid property name",
  unevaluatedItems: "is not allowed (unevaluatedItems)",
};

function rule(e: TbError): string {
  const at = evaluationPath(e.schemaPath);
  return e.keyword === "boolean" ? at : `${at === "#" ? "#" : at}/${e.keyword}`;
}

const plural = (n: unknown, word: string) => `${String(n)} ${word}${n === 1 ? "" : "s"}`;

/**
 * typebox reports `contains`, `minContains` and `maxContains` all as keyword "contains", in that
 * order for one schema and value, and says "at least 1 valid item" whatever the bound. The
 * params tell them apart: maxContains carries `maxContains`; a second error of the same place is
 * minContains (whose bound says more than contains' "at least 1", which is dropped then); a single
 * one is minContains when its bound is not contains' own 1 (minContains: 1 fails only together
 * with contains).
 */
function splitContains(errors: TbError[]): TbError[] {
  const out: TbError[] = [];
  const seen = new Map<string, number>();
  for (const e of errors) {
    if (e.keyword !== "contains") {
      out.push(e);
      continue;
    }
    if ("maxContains" in e.params) {
      out.push({
        ...e,
        keyword: "maxContains",
        message: `must contain at most ${plural(e.params.maxContains, "item")} matching contains`,
      });
      continue;
    }
    const key = `${e.schemaPath}\u0000${e.instancePath}`;
    const first = seen.get(key);
    const bound = e.params.minContains;
    const min = {
      ...e,
      keyword: "minContains",
      message: `must contain at least ${plural(bound, "item")} matching contains`,
    };
    if (first !== undefined) out[first] = min;
    else {
      seen.set(key, out.length);
      out.push(bound === 1 ? { ...e, message: "must contain at least 1 item matching contains" } : min);
    }
  }
  return out;
}

export function quote(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${headOf(s, 77)}...` : s;
}

/** Starts the message of a large enum's error in the explaining schema (enum-sets.ts). */
export const ENUM_SET_ERROR = "\u0000enum\u0000";

function messageFor(e: TbError): string {
  const p = e.params;
  switch (e.keyword) {
    case "enum":
      // A looked-up enum's error (enum-sets.ts `enumErrors`) has its message written already.
      return "allowedValues" in p ? `must be one of ${quote(p.allowedValues)}` : e.message;
    case "const":
      return `must be exactly ${quote(p.allowedValue)}`;
    case "if":
      return `does not match the "${String(p.failingKeyword)}" schema that applies because "if" matched or failed`;
    case "dependentRequired":
    case "dependencies":
      return `requires ${quote(p.dependencies)} when "${String(p.property)}" is present`;
    case "boolean":
      return "no value is allowed here (the schema is false)";
    default:
      return boundMessage(e);
  }
}

/** What the caller knows about the schema, for findings that need more than the errors. */
export interface ErrorContext {
  /** The errors of the `then`/`else` branch an `if` error names (typebox reports only the `if`). */
  explainIf?(e: TbError): TbError[];
  /** True when the schema object at `schemaPath` declares property `name` somewhere inside it. */
  declares?(schemaPath: string, name: string): boolean;
  /** True when the object at `instancePath` of the document has property `name`. */
  present?(instancePath: string, name: string): boolean;
}

/** Where each error stood in typebox's list: findings keep that order (document order, mostly). */
const rank = new WeakMap<TbError, number>();
const under = (e: TbError, prefix: string) => e.schemaPath.startsWith(prefix);
const depth = (p: string) => (p === "" ? 0 : p.split("/").length);

/**
 * The branch of a failed anyOf/oneOf that came closest: not refused for its type where the value
 * is, then the fewest errors, then the deepest one. null when every branch failed on the type.
 */
function closest(e: TbError, children: TbError[]): { index: number; errors: TbError[]; of: number } | null {
  const prefix = `${e.schemaPath === "#" ? "#" : e.schemaPath}/${e.keyword}/`;
  const branches = new Map<number, TbError[]>();
  for (const c of children) {
    const index = Number(c.schemaPath.slice(prefix.length).split("/")[0]);
    if (!branches.has(index)) branches.set(index, []);
    branches.get(index)?.push(c);
  }
  let best: { index: number; errors: TbError[]; score: number[] } | null = null;
  for (const [index, errs] of branches) {
    const typeMiss = errs.some(
      (c) =>
        c.keyword === "type" && c.instancePath === e.instancePath && c.schemaPath === `${prefix}${index}`,
    );
    if (typeMiss) continue;
    const score = [errs.length, -Math.max(...errs.map((c) => depth(c.instancePath)))];
    if (!best || score[0] < best.score[0] || (score[0] === best.score[0] && score[1] < best.score[1]))
      best = { index, errors: errs, score };
  }
  const of = Array.isArray(e.params.schemas) ? e.params.schemas.length : branches.size;
  return best && { index: best.index, errors: best.errors, of };
}

/** The speculative keyword a schema-path segment belongs to (`then`/`else` go with their `if`). */
const SEGMENT_OWNER = new Map(
  Object.entries(SPECULATIVE).flatMap(([kw, prefixes]) => prefixes.map((p) => [p.replace(/\/$/, ""), kw])),
);

/** A pointer and each of its ancestors: "/1/k" → "/1/k", "/1", "". */
function pointerAncestors(p: string): string[] {
  const out = [p];
  for (let i = p.lastIndexOf("/"); i >= 0; i = i === 0 ? -1 : p.lastIndexOf("/", i - 1))
    out.push(p.slice(0, i));
  return out;
}

/**
 * The errors below each speculative keyword, found in one pass: an error belongs to keyword `kw`
 * of the schema object at `base`, evaluated at instance location `at`, when its schema path runs
 * through `base/kw` and its instance path is `at` or below it. Matching on the schema path alone
 * would give one array item's anyOf the branch errors of every other item.
 */
function childIndex(errors: TbError[]): (e: TbError) => TbError[] {
  const buckets = new Map<string, TbError[]>();
  for (const c of errors) {
    const segments = c.schemaPath.split("/");
    const instances = pointerAncestors(c.instancePath);
    for (let j = 1; j < segments.length; j++) {
      const owner = SEGMENT_OWNER.get(segments[j]);
      if (!owner) continue;
      const base = segments.slice(0, j).join("/");
      for (const at of instances) {
        const key = `${base}\u0000${owner}\u0000${at}`;
        const bucket = buckets.get(key);
        if (bucket) bucket.push(c);
        else buckets.set(key, [c]);
      }
    }
  }
  return (e) => buckets.get(`${e.schemaPath}\u0000${e.keyword}\u0000${e.instancePath}`) ?? [];
}

/**
 * The errors to report: a speculative keyword's failing branches are not problems of the data,
 * except that of anyOf/oneOf the branch that came closest says best what is wrong, and `if`'s
 * `then`/`else` is a rule that applied. `notes` gets a word on where each such error comes from.
 */
function select(errors: TbError[], ctx: ErrorContext, notes: Map<TbError, string>): TbError[] {
  errors.forEach((e, i) => {
    if (!rank.has(e)) rank.set(e, i);
  });
  const out: TbError[] = [];
  // Shallowest first, so a keyword claims its branches before a nested keyword among them does.
  const depths = new Map(errors.map((e) => [e, depth(e.schemaPath)]));
  const sorted = [...errors].sort((a, b) => (depths.get(a) ?? 0) - (depths.get(b) ?? 0));
  let childrenOf: ((e: TbError) => TbError[]) | undefined;
  const taken = new Set<TbError>();
  for (const e of sorted) {
    if (taken.has(e)) continue;
    taken.add(e);
    if (!SPECULATIVE[e.keyword]) {
      out.push(e);
      continue;
    }
    childrenOf ??= childIndex(sorted);
    const children = childrenOf(e).filter((o) => !taken.has(o));
    for (const c of children) taken.add(c);
    if (e.keyword === "anyOf" || e.keyword === "oneOf") {
      const passing = e.params.passingSchemas;
      const best = Array.isArray(passing) && passing.length > 1 ? null : closest(e, children);
      if (best) {
        const chosen = select(best.errors, ctx, notes);
        const note = `in ${e.keyword} branch ${best.index + 1} of ${best.of}, the closest to matching`;
        for (const c of chosen) if (!notes.has(c)) notes.set(c, note);
        out.push(...chosen);
        continue;
      }
    }
    if (e.keyword === "if" && ctx.explainIf) {
      const branch = String(e.params.failingKeyword);
      const explained = select(ctx.explainIf(e), ctx, notes);
      if (explained.length > 0) {
        const why = branch === "then" ? '"if" matched' : '"if" did not match';
        for (const c of explained)
          if (!notes.has(c)) notes.set(c, `the "${branch}" rule applies because ${why}`);
        for (const c of explained) rank.set(c, (rank.get(e) ?? 0) + 0.001);
        out.push(...explained);
        continue;
      }
    }
    out.push(e);
  }
  return out;
}

/**
 * Where errors stand in the document, for the name lists: which pointers have an error on them
 * or below them (`unevaluated*`), and the errors on each pointer. Looked up per listed name: a
 * list of a million names, each compared with every error, was quadratic (2026-11-29).
 */
function errorPlaces(errors: TbError[]) {
  const within = new Set<string>();
  const at = new Map<string, TbError[]>();
  for (const o of errors) {
    if (o.keyword === "boolean") continue;
    const list = at.get(o.instancePath);
    if (list) list.push(o);
    else at.set(o.instancePath, [o]);
    for (const p of pointerAncestors(o.instancePath)) {
      if (within.has(p)) break;
      within.add(p);
    }
  }
  return { within, at: (p: string) => at.get(p) ?? [] };
}

/**
 * The findings of `raw`, in document order; at most `limit` of them (the caller keeps the first
 * max_findings and needs one more to know it dropped some): a name list of a million names made
 * a million findings to keep a thousand.
 */
export function toFindings(
  raw: TbError[],
  locate: Locate,
  ctx: ErrorContext = {},
  limit = Number.POSITIVE_INFINITY,
): Finding[] {
  const all = splitContains(raw);
  const notes = new Map<TbError, string>();
  const errors = select(all, ctx, notes).sort((a, b) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0));
  const out: Finding[] = [];
  let places: ReturnType<typeof errorPlaces> | undefined;
  const push = (e: TbError, code: string, message: string, pointer: string, key = false) => {
    const note = notes.get(e);
    out.push(
      finding(`json_schema.${code}`, note ? `${message} (${note})` : message, {
        path: pointer,
        rule: rule(e),
        ...(locate(pointer, key) ?? {}),
      }),
    );
  };
  // typebox reports a dependency once per missing name, each with the whole list: one finding per
  // name that is missing, naming it (as `required` does).
  const dependencyDone = new Set<string>();
  for (const e of errors) {
    if (out.length >= limit) break;
    const deps = e.params.dependencies;
    if (
      (e.keyword === "dependentRequired" || e.keyword === "dependencies") &&
      Array.isArray(deps) &&
      ctx.present
    ) {
      const key = `${e.schemaPath}\u0000${e.instancePath}\u0000${String(e.params.property)}`;
      if (dependencyDone.has(key)) continue;
      dependencyDone.add(key);
      for (const name of deps as string[])
        if (!ctx.present(e.instancePath, name))
          push(
            e,
            e.keyword,
            `missing property "${name}", required when "${String(e.params.property)}" is present`,
            e.instancePath,
          );
      continue;
    }
    if (e.keyword === "required") {
      for (const name of (e.params.requiredProperties as string[]) ?? []) {
        push(e, "required", `missing required property "${name}"`, e.instancePath);
      }
      continue;
    }
    const listed = NAME_LISTS[e.keyword];
    if (listed) {
      const names = (e.params[e.keyword] as Array<string | number>) ?? [];
      const childPrefix = `${e.schemaPath}/${e.keyword}`;
      const unevaluated = e.keyword.startsWith("unevaluated");
      // Another keyword of the same schema object failed: its annotations were dropped with it.
      const siblingFailed =
        unevaluated && errors.some((o) => o !== e && o.keyword !== "boolean" && under(o, e.schemaPath));
      places ??= errorPlaces(errors);
      for (const name of names) {
        if (out.length >= limit) break;
        const at = pointerJoin(e.instancePath, name);
        // A failing subschema (other than `false`) already says what is wrong with this member;
        // for unevaluated*, so does any error on the member, and a property declared by a
        // sibling keyword that failed is not "unevaluated" to the person reading this.
        const explained = unevaluated
          ? places.within.has(at)
          : places.at(at).some((o) => o !== e && o.schemaPath.startsWith(childPrefix));
        const declared =
          siblingFailed && typeof name === "string" && (ctx.declares?.(e.schemaPath, name) ?? false);
        if (!explained && !declared)
          push(
            e,
            e.keyword,
            `${typeof name === "number" ? "item" : "property"} ${quote(name)} ${listed}`,
            at,
            true,
          );
      }
      continue;
    }
    if (e.keyword === "boolean") {
      const kw = lastKeyword(evaluationPath(e.schemaPath));
      if (kw && NAME_LISTS[kw] && errors.some((o) => o.keyword === kw)) continue; // reported by the aggregate
      push(e, kw ?? "false_schema", messageFor(e), e.instancePath, kw === "additionalProperties");
      continue;
    }
    // Under propertyNames the value checked is the member's name: the finding goes on the key.
    const onName = keywordsAlong(evaluationPath(e.schemaPath)).includes("propertyNames");
    push(e, e.keyword, messageFor(e), e.instancePath, onName);
  }
  return out;
}
