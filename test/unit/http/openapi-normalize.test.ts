// The schema pass of the OpenAPI document (src/http/openapi/normalize.ts): pure, so unit-tested.
import { describe, expect, test } from "bun:test";
import { t } from "elysia";
import { documentedAs, named } from "../../../src/http/openapi/named.ts";
import { SchemaRegistry, simplify } from "../../../src/http/openapi/normalize.ts";

describe("SchemaRegistry.clean", () => {
  test("drops TypeBox's error and Elysia's nullable, keeps a property named error", () => {
    const reg = new SchemaRegistry();
    const out = reg.clean(
      t.Object({ error: t.Nullable(t.String({ error: "must be a string" })) }, { error: "an object" }),
    );
    expect(out).toEqual({
      type: "object",
      required: ["error"],
      properties: { error: { type: ["string", "null"] } },
    });
  });

  test("a named schema becomes a $ref; its nullable use keeps a null branch", () => {
    const reg = new SchemaRegistry();
    const Thing = named("Thing", t.Object({ n: t.Number() }));
    expect(reg.clean(t.Object({ a: Thing, b: t.Nullable(Thing) }))).toEqual({
      type: "object",
      required: ["a", "b"],
      properties: {
        a: { $ref: "#/components/schemas/Thing" },
        b: { anyOf: [{ $ref: "#/components/schemas/Thing" }, { type: "null" }] },
      },
    });
    expect(reg.components()).toEqual({
      Thing: { type: "object", required: ["n"], properties: { n: { type: "number" } } },
    });
  });

  test("two different schemas under one name throw", () => {
    const reg = new SchemaRegistry();
    reg.clean(named("Dup", t.Object({ a: t.String() })));
    reg.clean(named("Dup", t.Object({ a: t.String() }))); // equal: fine
    expect(() => reg.clean(named("Dup", t.Object({ b: t.String() })))).toThrow(
      'two different schemas are named "Dup"',
    );
  });

  test("t.Integer documents an integer, not a string-or-integer", () => {
    const reg = new SchemaRegistry();
    expect(reg.clean(t.Integer({ minimum: 1 }))).toEqual({ type: "integer", minimum: 1 });
    expect(reg.clean(t.Nullable(t.Integer({ minimum: 1 })))).toEqual({
      type: ["integer", "null"],
      minimum: 1,
    });
  });

  test("documentedAs replaces the validation schema in the document", () => {
    const reg = new SchemaRegistry();
    expect(reg.clean(documentedAs(t.String(), { type: "integer", minimum: 1 }))).toEqual({
      type: "integer",
      minimum: 1,
    });
  });
});

describe("simplify", () => {
  test("an enum made nullable admits null", () => {
    expect(simplify({ anyOf: [{ type: "string", enum: ["a", "b"] }, { type: "null" }] })).toEqual({
      type: ["string", "null"],
      enum: ["a", "b", null],
    });
  });
  test("a record of anything is additionalProperties", () => {
    expect(simplify({ type: "object", patternProperties: { "^(.*)$": {} } })).toEqual({
      type: "object",
      additionalProperties: {},
    });
  });
});
