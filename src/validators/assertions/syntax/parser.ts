// A recursive-descent parser for CEL (cel-spec langdef.md grammar), producing the same tree as
// cel-go: `&&`/`||` chains balanced, unary `!`/`-` pairs cancelled, a minus on a number literal
// folded into it, macros expanded (macros.ts). Written here rather than taken from @bufbuild/cel,
// whose generated parser takes ~20 µs per character and cannot read backtick-quoted fields: save
// time runs on the HTTP thread, and 200 rules of 4 KB must not hold it for seconds.
// Checked against cel-go's trees for the cel-spec parser suites (test/unit/validators/cel-parser).
import { CEL_LIMITS } from "../../limits.ts";
import { call, constant, type Expr, Ids, ident, list, node, select } from "./ast.ts";
import { CelSyntaxError, type Token, tokenize } from "./lexer.ts";
import { expandMacro } from "./macros.ts";

export { CelSyntaxError };

const RELATIONS: Record<string, string> = {
  "<": "_<_",
  "<=": "_<=_",
  ">": "_>_",
  ">=": "_>=_",
  "==": "_==_",
  "!=": "_!=_",
};
const ADDITIVE: Record<string, string> = { "+": "_+_", "-": "_-_" };
const MULTIPLICATIVE: Record<string, string> = { "*": "_*_", "/": "_/_", "%": "_%_" };
/** langdef.md: reserved for future use, refused as identifiers. */
const RESERVED = new Set(
  "as break const continue else for function if import let loop package namespace return var void while".split(
    " ",
  ),
);

/** Literal and operator words: never a name, not even after a dot (quote them: a.`in`). */
const KEYWORDS = new Set(["true", "false", "null", "in"]);

export interface Parsed {
  expr: Expr;
  ids: Ids;
}

export function parseCel(source: string): Parsed {
  const p = new Parser(tokenize(source));
  const expr = p.expr();
  p.expectEnd();
  return { expr, ids: p.ids };
}

class Parser {
  readonly ids = new Ids();
  #i = 0;
  #depth = 0;

  constructor(readonly tokens: Token[]) {}

  get #tok(): Token {
    return this.tokens[this.#i];
  }

  #isOp(value: string, at = 0): boolean {
    const t = this.tokens[this.#i + at];
    return t !== undefined && t.kind === "op" && t.value === value;
  }

  #fail(message: string, tok: Token = this.#tok): never {
    throw new CelSyntaxError(message, tok.pos);
  }

  #describe(t: Token): string {
    if (t.kind === "eof") return "end of expression";
    if (t.kind === "op" || t.kind === "ident") return `'${t.value}'`;
    if (t.kind === "quoted") return `\`${t.value}\``;
    return `${t.kind} literal`;
  }

  #expect(value: string): void {
    if (!this.#isOp(value)) this.#fail(`expected '${value}' but found ${this.#describe(this.#tok)}`);
    this.#i++;
  }

  expectEnd(): void {
    if (this.#tok.kind !== "eof") this.#fail(`unexpected ${this.#describe(this.#tok)}`);
  }

  expr(): Expr {
    if (++this.#depth > CEL_LIMITS.maxDepth)
      this.#fail(`the expression nests deeper than ${CEL_LIMITS.maxDepth} levels`);
    const cond = this.#or();
    let out = cond;
    if (this.#isOp("?")) {
      this.#i++;
      const yes = this.#or();
      this.#expect(":");
      out = call(this.ids, "_?_:_", [cond, yes, this.expr()]);
    }
    this.#depth--;
    return out;
  }

  #or(): Expr {
    return this.#balanced("||", "_||_", () => this.#and());
  }

  #and(): Expr {
    return this.#balanced("&&", "_&&_", () => this.#relation());
  }

  /** cel-go builds `a && b && c && d` as a balanced tree: depth log n, not n. */
  #balanced(op: string, fn: string, operand: () => Expr): Expr {
    const terms = [operand()];
    while (this.#isOp(op)) {
      this.#i++;
      terms.push(operand());
    }
    const tree = (lo: number, hi: number): Expr => {
      const mid = Math.floor((lo + hi + 1) / 2);
      const left = mid === lo ? terms[mid] : tree(lo, mid - 1);
      const right = mid === hi ? terms[mid + 1] : tree(mid + 1, hi);
      return call(this.ids, fn, [left, right]);
    };
    return terms.length === 1 ? terms[0] : tree(0, terms.length - 2);
  }

  #relation(): Expr {
    let left = this.#additive();
    for (;;) {
      const t = this.#tok;
      const fn =
        t.kind === "op" && Object.hasOwn(RELATIONS, t.value)
          ? RELATIONS[t.value]
          : t.kind === "ident" && t.value === "in"
            ? "@in"
            : null;
      if (!fn) return left;
      this.#i++;
      left = call(this.ids, fn, [left, this.#additive()]);
    }
  }

  #additive(): Expr {
    return this.#leftAssoc(ADDITIVE, () => this.#multiplicative());
  }

  #multiplicative(): Expr {
    return this.#leftAssoc(MULTIPLICATIVE, () => this.#unary());
  }

  #leftAssoc(ops: Record<string, string>, operand: () => Expr): Expr {
    let left = operand();
    while (this.#tok.kind === "op" && Object.hasOwn(ops, (this.#tok as { value: string }).value)) {
      const fn = ops[(this.#tok as { value: string }).value];
      this.#i++;
      left = call(this.ids, fn, [left, operand()]);
    }
    return left;
  }

  #unary(): Expr {
    for (const [op, fn] of [
      ["!", "!_"],
      ["-", "-_"],
    ]) {
      if (!this.#isOp(op)) continue;
      let n = 0;
      while (this.#isOp(op)) {
        n++;
        this.#i++;
      }
      const lit = this.#tok;
      // `-1` is the literal -1 (so -9223372036854775808 is in range); `--1` is 1, `---1` is -(1).
      if (op === "-" && n === 1 && (lit.kind === "int" || lit.kind === "double")) {
        this.#i++;
        const value =
          lit.kind === "int"
            ? constant(this.ids, { case: "int64Value", value: -lit.value })
            : constant(this.ids, { case: "doubleValue", value: -(lit.value as number) });
        return this.#postfix(value);
      }
      const operand = this.#member();
      return n % 2 === 0 ? operand : call(this.ids, fn, [operand]);
    }
    return this.#member();
  }

  #member(): Expr {
    return this.#postfix(this.#primary());
  }

  #postfix(start: Expr): Expr {
    let e = start;
    for (;;) {
      if (this.#isOp(".")) {
        this.#i++;
        if (this.#isOp("?")) this.#fail("optional field selection (.?) is not supported");
        const t = this.#tok;
        if (t.kind === "quoted") {
          this.#i++;
          e = select(this.ids, e, t.value);
        } else if (t.kind === "ident") {
          this.#i++;
          if (this.#isOp("(")) e = this.#call(t.value, e, t);
          else e = select(this.ids, e, this.#field(t as Token & { kind: "ident" }));
        } else {
          this.#fail(`expected a field name after '.' but found ${this.#describe(t)}`);
        }
      } else if (this.#isOp("[")) {
        this.#i++;
        if (this.#isOp("?")) this.#fail("optional indexing ([?) is not supported");
        const index = this.expr();
        this.#expect("]");
        e = call(this.ids, "_[_]", [e, index]);
      } else {
        return e;
      }
    }
  }

  /** After a dot the reserved words are field names ({'if': 1}.if); the literal words are not. */
  #field(t: Token & { kind: "ident" }): string {
    if (KEYWORDS.has(t.value))
      this.#fail(`'${t.value}' is a reserved word: quote it, as in .\`${t.value}\``, t);
    return t.value;
  }

  #name(t: Token & { kind: "ident" }): string {
    if (RESERVED.has(t.value) || KEYWORDS.has(t.value)) this.#fail(`'${t.value}' is a reserved word`, t);
    return t.value;
  }

  #primary(): Expr {
    const t = this.#tok;
    switch (t.kind) {
      case "int":
        if (t.value > 0x7fff_ffff_ffff_ffffn) this.#fail(`the integer ${t.text} is out of range`);
        this.#i++;
        return constant(this.ids, { case: "int64Value", value: t.value });
      case "uint":
        this.#i++;
        return constant(this.ids, { case: "uint64Value", value: t.value });
      case "double":
        this.#i++;
        return constant(this.ids, { case: "doubleValue", value: t.value });
      case "string":
        this.#i++;
        return constant(this.ids, { case: "stringValue", value: t.value });
      case "bytes":
        this.#i++;
        return constant(this.ids, { case: "bytesValue", value: t.value });
      case "ident":
        return this.#identifier("");
      case "op":
        if (t.value === "." && this.tokens[this.#i + 1]?.kind === "ident") {
          this.#i++;
          return this.#identifier(".");
        }
        if (t.value === "(") {
          this.#i++;
          const inner = this.expr();
          this.#expect(")");
          return inner;
        }
        if (t.value === "[") return this.#list();
        if (t.value === "{") return this.#map();
        break;
      case "quoted":
        this.#fail("a backtick-quoted name may only follow '.', as in data.`content-type`");
    }
    return this.#fail(`unexpected ${this.#describe(t)}`);
  }

  /** An identifier, a global call, or a message construction `a.b.C{field: value}`. */
  #identifier(dot: string): Expr {
    const t = this.#tok as Token & { kind: "ident" };
    this.#i++;
    if (dot === "") {
      if (t.value === "true" || t.value === "false")
        return constant(this.ids, { case: "boolValue", value: t.value === "true" });
      if (t.value === "null") return constant(this.ids, { case: "nullValue", value: 0 as never });
    }
    const name = dot + this.#name(t);
    if (this.#isOp("(")) return this.#call(name, undefined, t);
    let k = 0;
    while (this.#isOp(".", k) && this.tokens[this.#i + k + 1]?.kind === "ident") k += 2;
    if (!this.#isOp("{", k)) return ident(this.ids, name);
    const parts = [name];
    for (let j = 0; j < k; j += 2)
      parts.push(this.#name(this.tokens[this.#i + j + 1] as Token & { kind: "ident" }));
    this.#i += k;
    return this.#message(parts.join("."));
  }

  #args(): Expr[] {
    this.#expect("(");
    const args: Expr[] = [];
    if (!this.#isOp(")")) {
      do {
        args.push(this.expr());
        if (args.length > CEL_LIMITS.maxCallArguments)
          this.#fail(`a call takes at most ${CEL_LIMITS.maxCallArguments} arguments`);
      } while (this.#isOp(",") && ++this.#i);
    }
    this.#expect(")");
    return args;
  }

  #call(fn: string, target: Expr | undefined, at: Token): Expr {
    const args = this.#args();
    try {
      return expandMacro(this.ids, fn, target, args) ?? call(this.ids, fn, args, target);
    } catch (e) {
      if (e instanceof CelSyntaxError) throw new CelSyntaxError(e.message, at.pos);
      throw e;
    }
  }

  #list(): Expr {
    this.#expect("[");
    const elements: Expr[] = [];
    while (!this.#isOp("]")) {
      if (this.#isOp("?")) this.#fail("optional list elements ([?x]) are not supported");
      elements.push(this.expr());
      if (elements.length > CEL_LIMITS.maxListElements)
        this.#fail(`a list literal holds at most ${CEL_LIMITS.maxListElements} elements`);
      if (!this.#isOp(",")) break;
      this.#i++;
    }
    this.#expect("]");
    return list(this.ids, elements);
  }

  #map(): Expr {
    this.#expect("{");
    const entries: unknown[] = [];
    while (!this.#isOp("}")) {
      if (this.#isOp("?")) this.#fail("optional map entries ({?k: v}) are not supported");
      const id = this.ids.next();
      const key = this.expr();
      this.#expect(":");
      entries.push({ id, keyKind: { case: "mapKey", value: key }, value: this.expr(), optionalEntry: false });
      if (entries.length > CEL_LIMITS.maxMapEntries)
        this.#fail(`a map literal holds at most ${CEL_LIMITS.maxMapEntries} entries`);
      if (!this.#isOp(",")) break;
      this.#i++;
    }
    this.#expect("}");
    return node(this.ids, { case: "structExpr", value: { messageName: "", entries } as never });
  }

  #message(messageName: string): Expr {
    this.#expect("{");
    const entries: unknown[] = [];
    while (!this.#isOp("}")) {
      if (this.#isOp("?")) this.#fail("optional fields ({?f: v}) are not supported");
      const t = this.#tok;
      const field =
        t.kind === "quoted"
          ? t.value
          : t.kind === "ident"
            ? this.#name(t as Token & { kind: "ident" })
            : null;
      if (field === null) this.#fail(`expected a field name but found ${this.#describe(t)}`);
      this.#i++;
      const id = this.ids.next();
      this.#expect(":");
      entries.push({
        id,
        keyKind: { case: "fieldKey", value: field },
        value: this.expr(),
        optionalEntry: false,
      });
      if (!this.#isOp(",")) break;
      this.#i++;
    }
    this.#expect("}");
    return node(this.ids, { case: "structExpr", value: { messageName, entries } as never });
  }
}

/** "line 1, column 8: message" for people; columns count characters, from 1. */
export function syntaxMessage(source: string, e: CelSyntaxError): string {
  const before = source.slice(0, e.pos);
  const line = before.split("\n").length;
  const column = [...before.slice(before.lastIndexOf("\n") + 1)].length + 1;
  return `syntax error at line ${line}, column ${column}: ${e.message}`;
}
