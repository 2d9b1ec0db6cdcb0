/**
 * The JSON Schema rewrite to Gemini's schema subset: what Gemini refuses is
 * rewritten or dropped, what cannot be expressed is an error, and the output
 * only ever holds keywords Gemini knows.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import * as GoogleSchema from "../src/GoogleSchema.js"

const rewrite = (schema: GoogleSchema.JsonSchema) => Either.getOrThrow(GoogleSchema.fromJsonSchema(schema))

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
    const schema = { ...JSONSchema.make(Schema.Struct({
      name: Schema.String,
      tags: Schema.Array(Schema.String),
      nested: Schema.Struct({ n: Schema.Number }).annotations({ identifier: "Nested" })
    })) } as GoogleSchema.JsonSchema
    expect(schema["$defs"]).toBeDefined()
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

  it("turns null alternatives into nullable, type lists into one type or anyOf, oneOf into anyOf", () => {
    expect(rewrite({ anyOf: [{ type: "string" }, { type: "null" }] })).toEqual({ type: "STRING", nullable: true })
    expect(rewrite({ type: ["integer", "null"], description: "n" })).toEqual({ type: "INTEGER", nullable: true, description: "n" })
    expect(rewrite({ oneOf: [{ type: "string" }, { type: "number" }] })).toEqual({ anyOf: [{ type: "STRING" }, { type: "NUMBER" }] })
    expect(rewrite({ type: ["string", "boolean"] })).toEqual({ anyOf: [{ type: "STRING" }, { type: "BOOLEAN" }] })
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
    expect(Either.isLeft(recursive) && recursive.left).toContain("recursive")
    expect(Either.isLeft(GoogleSchema.fromJsonSchema({ $ref: "#/$defs/Missing" }))).toBe(true)
    expect(Either.isLeft(GoogleSchema.fromJsonSchema({ $ref: "https://example.com/schema.json" }))).toBe(true)
    let deep: GoogleSchema.JsonSchema = { type: "string" }
    for (let i = 0; i < 200; i++) deep = { type: "object", properties: { x: deep } }
    const tooDeep = GoogleSchema.fromJsonSchema(deep)
    expect(Either.isLeft(tooDeep) && tooDeep.left).toContain("deeper than")
  })

  it("a property named __proto__ stays a property and touches no prototype; a $ref to __proto__ is refused", () => {
    const schema = JSON.parse("{\"type\":\"object\",\"properties\":{\"__proto__\":{\"type\":\"string\"},\"ok\":{\"type\":\"number\"}},\"required\":[\"__proto__\"]}")
    const out = rewrite(schema)
    const properties = out["properties"] as Record<string, unknown>
    expect(Object.keys(properties)).toEqual(["__proto__", "ok"])
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(properties, "__proto__")?.value).toEqual({ type: "STRING" })
    expect(out["required"]).toEqual(["__proto__"])
    expect(Either.isLeft(GoogleSchema.fromJsonSchema({ $defs: {}, $ref: "#/$defs/__proto__" }))).toBe(true)
  })

  it.prop(
    "any Schema's JSON Schema rewrites to known keywords only (or a clear refusal)",
    [FastCheck.letrec((tie) => ({
      leaf: FastCheck.constantFrom<Schema.Schema.Any>(
        Schema.String, Schema.Number, Schema.Boolean, Schema.Int, Schema.Literal("a", "b"), Schema.Literal(1, 2),
        Schema.NullOr(Schema.String), Schema.Date, Schema.UUID, Schema.NonEmptyString
      ),
      node: FastCheck.oneof(
        { depthSize: "small" },
        tie("leaf"),
        FastCheck.array(tie("node"), { minLength: 1, maxLength: 3 }).map((members) =>
          Schema.Struct(Object.fromEntries(members.map((m, i) => [`f${i}`, m as Schema.Schema.Any]))) as Schema.Schema.Any),
        tie("node").map((m) => Schema.Array(m as Schema.Schema.Any) as Schema.Schema.Any),
        FastCheck.tuple(tie("node"), tie("node")).map(([a, b]) => Schema.Union(a as Schema.Schema.Any, b as Schema.Schema.Any) as Schema.Schema.Any)
      )
    })).node],
    ([schema]) => {
      const json = { ...JSONSchema.make(Schema.Struct({ value: schema as Schema.Schema.Any })) } as GoogleSchema.JsonSchema
      const out = GoogleSchema.fromJsonSchema(json)
      return Either.isRight(out) ? onlyKnownKeywords(out.right) : out.left.length > 0
    }
  )
})
