/**
 * The JSON Schema rewrite to Gemini's schema subset: what Gemini refuses is
 * rewritten or dropped, what cannot be expressed is an error, and the output
 * only ever holds keywords Gemini knows.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import * as GoogleSchema from "../src/GoogleSchema.js"

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
        return Result.isSuccess(out) ? onlyKnownKeywords(out.success) : out.failure.length > 0
      }),
      { numRuns: 100 }
    )
  })
})
