/**
 * The JSON Schema rewrite to Gemini's schema subset: what Gemini refuses is
 * rewritten or dropped, what cannot be expressed is an error, and the output
 * only ever holds keywords Gemini knows.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Tool } from "@chat-ts/core"
import fc from "fast-check"
import * as GoogleSchema from "../src/GoogleSchema.js"
import { violations } from "./support/geminiSpec.js"

const rewrite = (schema: GoogleSchema.JsonSchema) => Result.getOrThrow(GoogleSchema.fromJsonSchema(schema))

/** Effect's JSON Schema (draft 2020-12) of a schema as one document: its definitions under `$defs`. */
const jsonSchemaOf = (schema: Schema.Top): GoogleSchema.JsonSchema => {
  const document = Schema.toJsonSchemaDocument(schema)
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    ...document.schema,
    ...(Object.keys(document.definitions).length === 0 ? {} : { $defs: document.definitions })
  }
}

const allowed = new Set([
  "type", "format", "title", "description", "nullable", "enum", "items", "properties", "required", "anyOf",
  "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum", "minProperties", "maxProperties",
  "example", "default", "propertyOrdering"
])

/** Every key of every (sub)schema is one Gemini knows. */
const onlyKnownKeywords = (schema: unknown): boolean => {
  if (typeof schema !== "object" || schema === null) return true
  const record = schema as Record<string, unknown>
  return Object.entries(record).every(([key, value]) => {
    if (!allowed.has(key)) return false
    if (key === "properties") return Object.values(value as object).every(onlyKnownKeywords)
    if (key === "items") return onlyKnownKeywords(value)
    if (key === "anyOf") return (value as Array<unknown>).every(onlyKnownKeywords)
    return true
  })
}

describe("GoogleSchema.fromJsonSchema", () => {
  it("inlines local $refs, drops additionalProperties and $schema, uppercases types", () => {
    // `Finite`: in Effect 4 `Number` also admits the strings "Infinity", "-Infinity" and "NaN".
    const schema = jsonSchemaOf(Schema.Struct({
      name: Schema.String,
      tags: Schema.Array(Schema.String),
      nested: Schema.Struct({ n: Schema.Finite }).annotate({ identifier: "Nested" })
    }))
    expect(schema["$defs"]).toBeDefined()
    expect(schema["$schema"]).toBeDefined()
    expect(schema["additionalProperties"]).toBeDefined()
    expect(rewrite(schema)).toEqual({
      type: "OBJECT",
      properties: {
        name: { type: "STRING" },
        tags: { type: "ARRAY", items: { type: "STRING" } },
        nested: { type: "OBJECT", properties: { n: { type: "NUMBER" } }, required: ["n"] }
      },
      required: ["name", "tags", "nested"]
    })
  })

  it("turns null alternatives into nullable and type lists into one type; alternatives that differ are Untyped", () => {
    expect(rewrite({ anyOf: [{ type: "string" }, { type: "null" }] })).toEqual({ type: "STRING", nullable: true })
    expect(rewrite({ type: ["integer", "null"], description: "n" })).toEqual({ type: "INTEGER", nullable: true, description: "n" })
    expect(rewrite({ oneOf: [{ type: "string", title: "a" }, { type: "string", title: "b" }] })).toEqual({ type: "STRING" })
    // Gemini requires a type and the SDK takes no anyOf beside one: alternatives that differ are Untyped.
    expect(GoogleSchema.rewrite({ oneOf: [{ type: "string", minLength: 1 }, { type: "string", maxLength: 0 }] })).toMatchObject(
      Result.fail({ _tag: "Untyped" })
    )
    // Alternatives of different types have no type Gemini can state: refused as Untyped (the layer sends JSON Schema).
    expect(GoogleSchema.rewrite({ oneOf: [{ type: "string" }, { type: "number" }] })).toEqual(Result.fail({
      _tag: "Untyped",
      reason: "the schema has alternatives of different types (STRING, NUMBER), which Gemini's schema cannot state"
    }))
    expect(Result.isFailure(GoogleSchema.rewrite({ type: ["string", "boolean"] }))).toBe(true)
  })

  it("keeps string enums and const as an enum; drops enums of numbers and formats Gemini refuses", () => {
    expect(rewrite({ const: "only" })).toEqual({ type: "STRING", enum: ["only"] })
    expect(rewrite({ enum: ["a", "b"] })).toEqual({ type: "STRING", enum: ["a", "b"] })
    expect(rewrite({ type: "number", enum: [1, 2] })).toEqual({ type: "NUMBER" })
    expect(rewrite({ type: "string", format: "date-time" })).toEqual({ type: "STRING", format: "date-time" })
    expect(rewrite({ type: "string", format: "email" })).toEqual({ type: "STRING" })
    expect(rewrite({ type: "integer", format: "int64", minimum: 0 })).toEqual({ type: "INTEGER", format: "int64", minimum: 0 })
  })

  it("merges allOf members and keeps required names that exist", () => {
    expect(rewrite({
      allOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { type: "object", properties: { b: { type: "number" } }, required: ["b", "ghost"] }
      ]
    })).toEqual({ type: "OBJECT", properties: { a: { type: "STRING" }, b: { type: "NUMBER" } }, required: ["a", "b"] })
  })

  it("refuses recursive, dangling and remote $refs, and schemas nested past the limit", () => {
    const recursive = GoogleSchema.fromJsonSchema({
      $defs: { Tree: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/Tree" } } } } },
      $ref: "#/$defs/Tree"
    })
    expect(Result.isFailure(recursive) && recursive.failure).toContain("recursive")
    expect(Result.isFailure(GoogleSchema.fromJsonSchema({ $ref: "#/$defs/Missing" }))).toBe(true)
    expect(Result.isFailure(GoogleSchema.fromJsonSchema({ $ref: "https://example.com/schema.json" }))).toBe(true)
    let deep: GoogleSchema.JsonSchema = { type: "string" }
    for (let i = 0; i < 200; i++) deep = { type: "object", properties: { x: deep } }
    const tooDeep = GoogleSchema.fromJsonSchema(deep)
    expect(Result.isFailure(tooDeep) && tooDeep.failure).toContain("deeper than")
  })

  it("a property named __proto__ stays a property and touches no prototype; a $ref to __proto__ is refused", () => {
    const schema = JSON.parse("{\"type\":\"object\",\"properties\":{\"__proto__\":{\"type\":\"string\"},\"ok\":{\"type\":\"number\"}},\"required\":[\"__proto__\"]}")
    const out = rewrite(schema)
    const properties = out["properties"] as Record<string, unknown>
    expect(Object.keys(properties)).toEqual(["__proto__", "ok"])
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(properties, "__proto__")?.value).toEqual({ type: "STRING" })
    expect(out["required"]).toEqual(["__proto__"])
    expect(Result.isFailure(GoogleSchema.fromJsonSchema({ $defs: {}, $ref: "#/$defs/__proto__" }))).toBe(true)
  })

  it("any Schema's JSON Schema rewrites to known keywords only (or a clear refusal)", () => {
    const { node } = fc.letrec<{ leaf: Schema.Top; node: Schema.Top }>((tie) => ({
      leaf: fc.constantFrom<Schema.Top>(
        Schema.String, Schema.Number, Schema.Finite, Schema.Boolean, Schema.Int, Schema.Literals(["a", "b"]), Schema.Literals([1, 2]),
        Schema.NullOr(Schema.String), Schema.Date, Schema.DateFromString, Schema.String.check(Schema.isUUID()), Schema.NonEmptyString
      ),
      node: fc.oneof(
        { depthSize: "small" },
        tie("leaf"),
        fc.array(tie("node"), { minLength: 1, maxLength: 3 }).map((members): Schema.Top =>
          Schema.Struct(Object.fromEntries(members.map((m, i) => [`f${i}`, m])))),
        tie("node").map((m): Schema.Top => Schema.Array(m)),
        fc.tuple(tie("node"), tie("node")).map(([a, b]): Schema.Top => Schema.Union([a, b]))
      )
    }))
    fc.assert(
      fc.property(node, (schema) => {
        const out = GoogleSchema.fromJsonSchema(jsonSchemaOf(Schema.Struct({ value: schema })))
        return Result.isSuccess(out) ? onlyKnownKeywords(out.success) && violations(out.success).length === 0 : out.failure.length > 0
      }),
      { numRuns: 100 }
    )
  })

  it("the checker of the v1beta Schema rules finds what the spec refuses", () => {
    expect(violations({ type: "OBJECT", properties: { a: { type: "STRING" } }, required: ["a"] })).toEqual([])
    expect(violations({ anyOf: [{ type: "STRING" }] })).toEqual(["schema: no type (type is required)"])
    expect(violations({ type: "TYPE_UNSPECIFIED" })).toEqual(["schema.type: \"TYPE_UNSPECIFIED\" is not a Type"])
    expect(violations({ type: "ARRAY", items: [{ type: "STRING" }] })).toHaveLength(1)
    expect(violations({ type: "STRING", enum: [1] })).toEqual(["schema.enum: not a list of strings"])
    expect(violations({ type: "STRING", $id: "/schemas/unknown" })).toEqual(["schema.$id: not a field of Schema"])
    expect(violations({ type: "OBJECT", properties: { a: { title: "unknown" } } })).toEqual([
      "schema.properties[\"a\"]: no type (type is required)"
    ])
    expect(violations({ type: "ARRAY", minItems: 2, maxItems: "3" })).toEqual([])
    expect(violations({ type: "ARRAY", minItems: -1 })).toHaveLength(1)
  })
})

/** The JSON Schema chat-ts sends for a tool with these parameters (the core's, as every provider gets it). */
const parametersOf = (fields: Schema.Struct.Fields): GoogleSchema.JsonSchema =>
  Tool.make("t", { description: "A tool.", parameters: fields }).declaration.parameters

enum Colour {
  Red = "red",
  Blue = "blue"
}
enum Level {
  Low = 1,
  High = 2
}

describe("GoogleSchema: every schema has a type (issue 32)", () => {
  it("Schema.Enum, tuple items and null alone are written with their type, and no anyOf", () => {
    const out = rewrite(parametersOf({
      colour: Schema.Enum(Colour),
      level: Schema.Enum(Level),
      pair: Schema.Tuple([Schema.String, Schema.String]),
      nothing: Schema.Null
    }))
    expect(violations(out)).toEqual([])
    const properties = out["properties"] as Record<string, unknown>
    expect(properties["colour"]).toEqual({ type: "STRING", enum: ["red", "blue"] })
    expect(properties["level"]).toEqual({ type: "NUMBER" })
    expect(properties["pair"]).toEqual({ type: "ARRAY", minItems: 2, items: { type: "STRING" } })
    expect(properties["nothing"]).toEqual({ type: "NULL" })
  })

  it("Schema.Unknown, unions of structs, alternatives and tuple items of different types are refused as Untyped, naming where", () => {
    const shapes = GoogleSchema.rewrite(parametersOf({
      shape: Schema.Union([
        Schema.Struct({ kind: Schema.Literal("circle"), radius: Schema.Number }),
        Schema.Struct({ kind: Schema.Literal("square"), side: Schema.Number })
      ])
    }))
    expect(Result.isFailure(shapes) && shapes.failure).toEqual({
      _tag: "Untyped",
      reason: "the schema at properties.shape has alternatives of type OBJECT that differ, which Gemini's schema cannot state (it takes no anyOf beside the type it requires)"
    })
    expect(GoogleSchema.rewrite(parametersOf({ data: Schema.Unknown }))).toEqual(Result.fail({
      _tag: "Untyped",
      reason: "the schema at properties.data allows a value of any type, which Gemini's schema cannot state"
    }))
    expect(GoogleSchema.rewrite(parametersOf({ either: Schema.Union([Schema.String, Schema.Finite]) }))).toEqual(Result.fail({
      _tag: "Untyped",
      reason: "the schema at properties.either has alternatives of different types (STRING, NUMBER), which Gemini's schema cannot state"
    }))
    const tuple = GoogleSchema.rewrite(parametersOf({ pair: Schema.Tuple([Schema.String, Schema.Finite]) }))
    expect(Result.isFailure(tuple) && tuple.failure).toMatchObject({ _tag: "Untyped", reason: expect.stringContaining("properties.pair.items") })
    const recursive = GoogleSchema.rewrite({ $defs: { N: { type: "object", properties: { n: { $ref: "#/$defs/N" } } } }, $ref: "#/$defs/N" })
    expect(Result.isFailure(recursive) && recursive.failure._tag).toBe("Unsupported")
  })

  it("a bound kept in allOf beside the base keeps the base's type, and the stricter bound", () => {
    expect(rewrite({ type: "string", minLength: 3, allOf: [{ minLength: 5 }] })).toEqual({ type: "STRING", minLength: 5 })
    expect(rewrite({ type: "string", minLength: 5, maxLength: 9, allOf: [{ minLength: 3, maxLength: 7 }] })).toEqual({
      type: "STRING",
      minLength: 5,
      maxLength: 7
    })
    expect(rewrite(parametersOf({ s: Schema.String.check(Schema.isMinLength(5), Schema.isMinLength(2)) }))).toMatchObject({
      properties: { s: { type: "STRING", minLength: 5 } }
    })
  })

  it("property: any Schema's JSON Schema as chat-ts sends it is a valid v1beta Schema, or is refused with a reason", () => {
    const { node } = fc.letrec<{ leaf: Schema.Top; node: Schema.Top }>((tie) => ({
      leaf: fc.constantFrom<Schema.Top>(
        Schema.String, Schema.Finite, Schema.Boolean, Schema.Int, Schema.Null, Schema.Unknown, Schema.Any,
        Schema.Literals(["a", "b"]), Schema.Literals([1, 2]), Schema.Enum(Colour), Schema.Enum(Level),
        Schema.NullOr(Schema.String), Schema.String.check(Schema.isUUID()), Schema.NonEmptyString,
        Schema.String.check(Schema.isMinLength(2), Schema.isMinLength(1)), Schema.Struct({}), Schema.ObjectKeyword
      ),
      node: fc.oneof(
        { depthSize: "small" },
        tie("leaf"),
        fc.array(tie("node"), { minLength: 1, maxLength: 3 }).map((members): Schema.Top =>
          Schema.Struct(Object.fromEntries(members.map((m, i) => [`f${i}`, i === 0 ? m : Schema.optional(m)])))),
        tie("node").map((m): Schema.Top => Schema.Array(m)),
        tie("node").map((m): Schema.Top => Schema.Record(Schema.String, m)),
        fc.array(tie("node"), { minLength: 1, maxLength: 3 }).map((members): Schema.Top => Schema.Tuple(members)),
        fc.tuple(tie("node"), tie("node")).map(([a, b]): Schema.Top => Schema.Union([a, b])),
        fc.tuple(tie("node"), tie("node")).map(([a, b]): Schema.Top =>
          Schema.Union([Schema.Struct({ kind: Schema.Literal("a"), a }), Schema.Struct({ kind: Schema.Literal("b"), b })]))
      )
    }))
    fc.assert(
      fc.property(node, (schema) => {
        const out = GoogleSchema.rewrite(parametersOf({ value: schema }))
        if (Result.isSuccess(out)) return violations(out.success).length === 0
        return out.failure.reason.length > 0 && (out.failure._tag === "Untyped" || out.failure._tag === "Unsupported")
      }),
      { numRuns: 300 }
    )
  })
})

describe("GoogleSchema: any JSON Schema at all (issue 32)", () => {
  const keyword = fc.constantFrom(
    "type", "format", "title", "description", "nullable", "enum", "const", "items", "prefixItems", "properties", "required",
    "anyOf", "oneOf", "allOf", "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
    "minProperties", "maxProperties", "example", "default", "propertyOrdering", "additionalProperties", "$ref", "$defs", "not",
    "examples", "__proto__"
  )
  const scalar = fc.oneof(
    fc.constantFrom("string", "number", "integer", "boolean", "array", "object", "null", "int64", "date-time", null, true, false, 0, 1, -1, 2.5, "5"),
    fc.string({ maxLength: 3 })
  )
  const { schema } = fc.letrec<{ schema: unknown; value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      scalar,
      fc.array(tie("value"), { maxLength: 3 }),
      tie("schema"),
      fc.dictionary(fc.string({ maxLength: 3 }), tie("schema"), { maxKeys: 3 })
    ),
    schema: fc.oneof({ depthSize: "small" }, fc.constant(true), fc.dictionary(keyword, tie("value"), { maxKeys: 5 }))
  }))

  it("property: whatever the JSON, the rewrite is a valid v1beta Schema (keywords of the wrong form dropped) or a refusal with a reason", () => {
    fc.assert(
      fc.property(schema, (json) => {
        const out = GoogleSchema.rewrite(json as GoogleSchema.JsonSchema)
        return Result.isSuccess(out) ? violations(out.success).length === 0 : out.failure.reason.length > 0
      }),
      { numRuns: 1000 }
    )
    expect(rewrite({ type: "array", minItems: [], maxItems: -1, items: { type: "string", pattern: 5, title: "t" } })).toEqual({
      type: "ARRAY",
      items: { type: "STRING", title: "t" }
    })
  })
})
