/**
 * JSON Schema to the schema subset Gemini accepts (the OpenAPI-style `Schema`
 * of `responseSchema` and of function declarations' `parameters`).
 *
 * Gemini refuses much of JSON Schema: `$ref`/`$defs`, `additionalProperties`,
 * `const`, type arrays, `oneOf`/`allOf`, non-string enums and most `format`s.
 * `fromJsonSchema` rewrites what can be rewritten (local `$ref`s inlined,
 * `null` alternatives as `nullable`, `const` as a one-value enum, `oneOf` as
 * `anyOf`, one-member `allOf` inlined) and drops constraints Gemini cannot
 * state; the answer is still checked against the full schema by the core.
 * What cannot be rewritten (a recursive `$ref`, a non-local `$ref`, too deep a
 * schema) is an error.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"

/** A JSON Schema object. */
export type JsonSchema = { readonly [key: string]: unknown }

/** The deepest schema rewritten; deeper ones are refused. */
export const maxDepth = 64

/** Keywords copied as they are. */
const kept: ReadonlyArray<string> = [
  "title",
  "description",
  "nullable",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "minProperties",
  "maxProperties",
  "example",
  "default",
  "propertyOrdering"
]

/** The `format`s Gemini takes, per type. */
const formats: { readonly [type: string]: ReadonlyArray<string> } = {
  STRING: ["enum", "date-time"],
  NUMBER: ["float", "double"],
  INTEGER: ["int32", "int64"]
}

const types: ReadonlySet<string> = new Set(["string", "number", "integer", "boolean", "array", "object"])

const isObject = (u: unknown): u is JsonSchema => typeof u === "object" && u !== null && !Array.isArray(u)

/** Sets a key without touching the prototype (a property may be called `__proto__`). */
const put = (target: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

class Rewriter {
  constructor(private readonly root: JsonSchema) {}

  private resolve(ref: string, stack: ReadonlyArray<string>): JsonSchema {
    if (stack.includes(ref)) throw new Error(`the schema is recursive through ${ref}; Gemini's schema cannot refer to itself`)
    const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref)
    const defs = match === null ? undefined : this.root[match[1]!]
    const name = match === null ? undefined : decodeURIComponent(match[2]!).replace(/~1/g, "/").replace(/~0/g, "~")
    const target = isObject(defs) && name !== undefined && Object.hasOwn(defs, name) ? defs[name] : undefined
    if (!isObject(target)) throw new Error(`$ref ${ref} does not point to a definition of this schema`)
    return target
  }

  rewrite(schema: unknown, depth: number, stack: ReadonlyArray<string>): Record<string, unknown> {
    if (depth > maxDepth) throw new Error(`the schema is nested deeper than ${maxDepth} levels`)
    if (schema === true || schema === undefined) return {}
    if (!isObject(schema)) throw new Error(`a schema must be an object, got ${JSON.stringify(schema) ?? String(schema)}`)
    if (typeof schema.$ref === "string") {
      const { $ref, ...rest } = schema
      const target = this.resolve($ref, stack)
      return this.rewrite({ ...target, ...rest }, depth + 1, [...stack, $ref])
    }
    const out: Record<string, unknown> = {}
    for (const key of kept) if (schema[key] !== undefined) put(out, key, schema[key])

    // anyOf / oneOf: `null` members make the schema nullable; one member left is inlined.
    const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined
    if (alternatives !== undefined) {
      const members = alternatives.filter((member) => !(isObject(member) && member.type === "null"))
      if (members.length < alternatives.length) out.nullable = true
      if (members.length === 1) return { ...this.rewrite(members[0], depth + 1, stack), ...out }
      if (members.length > 1) out.anyOf = members.map((member) => this.rewrite(member, depth + 1, stack))
      return out
    }
    if (Array.isArray(schema.allOf)) {
      const merged = schema.allOf.reduce<Record<string, unknown>>((acc, member) => {
        const next = this.rewrite(member, depth + 1, stack)
        const properties = isObject(acc.properties) || isObject(next.properties)
          ? { ...(acc.properties as object | undefined), ...(next.properties as object | undefined) }
          : undefined
        const required = [
          ...(Array.isArray(acc.required) ? acc.required : []),
          ...(Array.isArray(next.required) ? next.required : [])
        ]
        return {
          ...acc,
          ...next,
          ...(properties === undefined ? {} : { properties }),
          ...(required.length === 0 ? {} : { required: [...new Set(required)] })
        }
      }, {})
      return { ...merged, ...out }
    }

    // type: a list of types becomes one type (+ nullable) or an anyOf.
    let type: string | undefined
    const declared = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type]
    const named = declared.filter((t): t is string => typeof t === "string" && types.has(t))
    if (declared.includes("null")) out.nullable = true
    if (named.length === 1) type = named[0]!.toUpperCase()
    else if (named.length > 1) {
      out.anyOf = named.map((t) => this.rewrite({ ...schema, type: t, nullable: undefined }, depth + 1, stack))
      return out
    }

    // const / enum: Gemini takes string enums only; others are left to the core's check.
    const values = schema.const !== undefined ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined
    if (values !== undefined) {
      const strings = values.filter((v): v is string => typeof v === "string")
      if (values.includes(null)) out.nullable = true
      if (strings.length > 0 && strings.length === values.filter((v) => v !== null).length) {
        type ??= "STRING"
        if (type === "STRING") out.enum = strings
      }
    }
    if (type === undefined && isObject(schema.properties)) type = "OBJECT"
    if (type === undefined && schema.items !== undefined) type = "ARRAY"
    if (type !== undefined) out.type = type

    if (typeof schema.format === "string" && type !== undefined && (formats[type] ?? []).includes(schema.format)) {
      out.format = schema.format
    }
    if (type === "ARRAY") {
      const items = Array.isArray(schema.prefixItems) && schema.items === undefined ? schema.prefixItems[0] : schema.items
      if (isObject(items)) out.items = this.rewrite(items, depth + 1, stack)
      else if (Array.isArray(items) && items.length > 0) out.items = this.rewrite({ anyOf: items }, depth + 1, stack)
    }
    if (isObject(schema.properties)) {
      const properties: Record<string, unknown> = {}
      for (const [name, property] of Object.entries(schema.properties)) {
        put(properties, name, this.rewrite(property, depth + 1, stack))
      }
      out.properties = properties
      const required = Array.isArray(schema.required)
        ? schema.required.filter((name): name is string => typeof name === "string" && Object.hasOwn(properties, name))
        : []
      if (required.length > 0) out.required = required
    }
    return out
  }
}

/** Rewrites a JSON Schema into Gemini's schema subset, or says why it cannot. */
export const fromJsonSchema = (schema: JsonSchema): Result.Result<JsonSchema, string> => {
  try {
    return Result.succeed(new Rewriter(schema).rewrite(schema, 0, []))
  } catch (error) {
    return Result.fail(error instanceof Error ? error.message : String(error))
  }
}
