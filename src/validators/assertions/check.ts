// The save-time type check of a parsed expression (CONTRACT §2a: a bad expression is a 400 at
// save, never a run-time surprise). @bufbuild/cel has no checker, so this is Assay's: types are
// inferred bottom-up from literals and the environment's overloads, `data` and `row` are dyn, and
// an expression is refused only when no value of `data` could make it work: an unknown name or
// function, a call no overload accepts, a non-bool rule, a literal map with duplicate or
// unsupported keys, a regex literal RE2 cannot compile.
import { env, functionsNamed } from "./env.ts";
import { OPERATOR_NAMES } from "./errors.ts";
import { compilePattern } from "./ext/std.ts";
import { children, type Expr } from "./syntax/ast.ts";

export class CheckError extends Error {}

/** The names a rule may read. */
export const VARIABLES = ["data", "row"];
const TYPE_NAMES = new Set([
  ...["int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "dyn"],
  ...["google.protobuf.Timestamp", "google.protobuf.Duration"],
]);
/** cel-go's macros over an index or key and a value (cel-spec's two-variable comprehensions). */
const TWO_VARIABLE_MACROS = new Set([
  ...["all", "exists", "existsOne", "exists_one", "map", "filter"],
  ...["transformList", "transformMap", "transformMapEntry"],
]);
const MAP_KEYS = new Set(["int", "uint", "bool", "string", "dyn"]);
const WRAPPERS: Record<string, string> = {
  "google.protobuf.BoolValue": "bool",
  "google.protobuf.BytesValue": "bytes",
  "google.protobuf.DoubleValue": "double",
  "google.protobuf.FloatValue": "double",
  "google.protobuf.Int32Value": "int",
  "google.protobuf.Int64Value": "int",
  "google.protobuf.StringValue": "string",
  "google.protobuf.UInt32Value": "uint",
  "google.protobuf.UInt64Value": "uint",
  "google.protobuf.Timestamp": "google.protobuf.Timestamp",
  "google.protobuf.Duration": "google.protobuf.Duration",
};

const display = (fn: string) => OPERATOR_NAMES[fn] ?? fn;
const typeText = (t: string) =>
  t
    .replace(/^google\.protobuf\./, "")
    .toLowerCase()
    .replace("null_type", "null");

/** Checks `expr`; returns its type name ("dyn" when it depends on the data). */
export function checkTypes(expr: Expr, options: { bool: boolean }): string {
  const type = new Checker().check(expr, new Map());
  if (options.bool && type !== "bool" && type !== "dyn")
    throw new CheckError(`must evaluate to bool, not ${typeText(type)}`);
  return type;
}

class Checker {
  check(e: Expr, scope: Map<string, string>): string {
    const k = e.exprKind;
    switch (k.case) {
      case "constExpr":
        return constantType(k.value.constantKind.case);
      case "identExpr":
        return this.#ident(k.value.name, scope);
      case "selectExpr": {
        const operand = k.value.operand as Expr;
        const qualified = qualifiedName(e, scope);
        if (qualified && TYPE_NAMES.has(qualified)) return "type";
        const t = this.check(operand, scope);
        if (t !== "dyn" && t !== "map")
          throw new CheckError(
            `${typeText(t)} has no field '${k.value.field}' (only maps and data have fields)`,
          );
        return k.value.testOnly ? "bool" : "dyn";
      }
      case "callExpr":
        return this.#call(k.value.function, k.value.target, k.value.args, scope);
      case "listExpr":
        for (const c of k.value.elements) this.check(c, scope);
        return "list";
      case "structExpr":
        return k.value.messageName === ""
          ? this.#map(e, scope)
          : this.#message(k.value.messageName, e, scope);
      case "comprehensionExpr": {
        const c = k.value;
        const range = this.check(c.iterRange as Expr, scope);
        if (range !== "list" && range !== "map" && range !== "dyn")
          throw new CheckError(`cannot iterate over ${typeText(range)}: a macro needs a list or a map`);
        const accu = this.check(c.accuInit as Expr, scope);
        const inner = new Map(scope).set(c.accuVar, accu).set(c.iterVar, "dyn");
        this.check(c.loopCondition as Expr, inner);
        this.check(c.loopStep as Expr, inner);
        return this.check(c.result as Expr, new Map(scope).set(c.accuVar, accu));
      }
      default:
        throw new CheckError("unsupported expression");
    }
  }

  #ident(name: string, scope: Map<string, string>): string {
    const t = scope.get(name);
    if (t !== undefined) return t;
    if (VARIABLES.includes(name)) return "dyn";
    if (TYPE_NAMES.has(name)) return "type";
    throw new CheckError(`unknown name '${name}': a rule reads \`data\` (and \`row\` for rows)`);
  }

  #call(fn: string, target: Expr | undefined, args: Expr[], scope: Map<string, string>): string {
    // `math.greatest(…)`: a function whose name has a dot, not a method of a variable `math`.
    const qualified = target ? qualifiedName(target, scope) : null;
    if (qualified && functionsNamed(`${qualified}.${fn}`).length > 0)
      return this.#call(`${qualified}.${fn}`, undefined, args, scope);
    // `l.all(i, v, p)` is no macro here (only the one-variable forms are expanded): without this,
    // its first argument reads as an unknown name 'i', which tells the author nothing.
    const [first, second] = args;
    if (
      target &&
      TWO_VARIABLE_MACROS.has(fn) &&
      args.length >= 3 &&
      first?.exprKind.case === "identExpr" &&
      second?.exprKind.case === "identExpr"
    )
      throw new CheckError(
        `two-variable comprehensions (${fn}(${first.exprKind.value.name}, ${second.exprKind.value.name}, …)) are not supported`,
      );
    const argTypes = args.map((a) => this.check(a, scope));
    const targetType = target ? this.check(target, scope) : undefined;
    switch (fn) {
      case "_&&_":
      case "_||_":
        for (const t of argTypes)
          if (t !== "bool" && t !== "dyn")
            throw new CheckError(`${fn.slice(1, 3)} needs bool operands, not ${typeText(t)}`);
        return "bool";
      case "_?_:_":
        if (argTypes[0] !== "bool" && argTypes[0] !== "dyn")
          throw new CheckError(`the condition of ?: must be a bool, not ${typeText(argTypes[0])}`);
        return argTypes[1] === argTypes[2] ? argTypes[1] : "dyn";
      case "_[_]":
        if (!["list", "map", "dyn"].includes(argTypes[0]))
          throw new CheckError(`cannot index ${typeText(argTypes[0])} with []`);
        return "dyn";
      case "@not_strictly_false":
        return "bool";
      case "matches":
        this.#pattern(args[args.length - 1]);
    }
    const candidates = functionsNamed(fn);
    const shaped = candidates.filter((f) => (f.target !== undefined) === (target !== undefined));
    if (shaped.length === 0) {
      if (candidates.length === 0) throw new CheckError(`unknown function '${fn}'`);
      throw new CheckError(
        target
          ? `'${fn}' is a function, not a method: call it as ${fn}(…)`
          : `'${fn}' is a method: call it as value.${fn}(…)`,
      );
    }
    const counted = shaped.filter((f) => f.arguments.length === args.length);
    if (counted.length === 0) {
      const counts = [...new Set(shaped.map((f) => f.arguments.length))].sort().join(" or ");
      throw new CheckError(`'${display(fn)}' takes ${counts} argument(s), not ${args.length}`);
    }
    const fits = (t: string, param: { name: string }) =>
      t === "dyn" || param.name === "dyn" || t === param.name;
    const matching = counted.filter(
      (f) =>
        (!f.target || fits(targetType as string, f.target)) &&
        f.arguments.every((p, i) => fits(argTypes[i], p)),
    );
    if (matching.length === 0) {
      const shown = [...(targetType ? [targetType] : []), ...argTypes].map(typeText).join(", ");
      throw new CheckError(`no overload of '${display(fn)}' takes (${shown})`);
    }
    const results = new Set(matching.map((f) => f.result.name));
    return results.size === 1 ? [...results][0] : "dyn";
  }

  #pattern(arg: Expr | undefined): void {
    const k = arg?.exprKind;
    if (k?.case !== "constExpr" || k.value.constantKind.case !== "stringValue") return;
    try {
      compilePattern(k.value.constantKind.value);
    } catch (e) {
      throw new CheckError(`invalid regular expression: ${(e as Error).message}`);
    }
  }

  #map(e: Expr, scope: Map<string, string>): string {
    const seen = new Set<string>();
    for (const entry of (e.exprKind.value as { entries: Array<{ keyKind: { value: Expr }; value: Expr }> })
      .entries) {
      const key = entry.keyKind.value;
      const t = this.check(key, scope);
      if (!MAP_KEYS.has(t))
        throw new CheckError(`a map key must be an int, uint, bool or string, not ${typeText(t)}`);
      const literal = constantKey(key);
      if (literal !== null) {
        if (seen.has(literal)) throw new CheckError(`the map literal repeats the key ${literal.slice(1)}`);
        seen.add(literal);
      }
      this.check(entry.value, scope);
    }
    return "map";
  }

  #message(name: string, e: Expr, scope: Map<string, string>): string {
    if (!Object.hasOwn(WRAPPERS, name) && env.registry.getMessage(name) === undefined)
      throw new CheckError(`unknown message type '${name}'`);
    for (const c of children(e)) this.check(c, scope);
    return WRAPPERS[name] ?? "dyn";
  }
}

function constantType(kind: string | undefined): string {
  switch (kind) {
    case "boolValue":
      return "bool";
    case "int64Value":
      return "int";
    case "uint64Value":
      return "uint";
    case "doubleValue":
      return "double";
    case "stringValue":
      return "string";
    case "bytesValue":
      return "bytes";
    case "nullValue":
      return "null_type";
    default:
      return "dyn";
  }
}

/** A literal map key as it compares: 1, 1u and true are three keys; "1" a fourth. */
function constantKey(e: Expr): string | null {
  const k = e.exprKind;
  if (k.case !== "constExpr") return null;
  const c = k.value.constantKind;
  if (c.case === "int64Value" || c.case === "uint64Value") return `n${c.value}`;
  if (c.case === "stringValue") return `s${c.value}`;
  if (c.case === "boolValue") return `b${c.value}`;
  return null;
}

/** `a.b.c` as "a.b.c" when `a` is no variable in scope (a type or function namespace). */
function qualifiedName(e: Expr, scope: Map<string, string>): string | null {
  const k = e.exprKind;
  if (k.case === "identExpr") {
    const name = k.value.name;
    return scope.has(name) || VARIABLES.includes(name) ? null : name;
  }
  if (k.case === "selectExpr" && !k.value.testOnly && k.value.operand) {
    const head = qualifiedName(k.value.operand, scope);
    return head === null ? null : `${head}.${k.value.field}`;
  }
  return null;
}
