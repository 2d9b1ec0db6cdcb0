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
 * Every schema written has a `type`, which Gemini's v1beta `Schema` requires,
 * and no `anyOf` (`@google/genai` refuses one beside a type): string enums
 * become one enum, alternatives alike but for their titles (a tuple of
 * strings) that one schema, `null` alternatives `nullable`, `null` alone
 * `NULL`. A schema with no type Gemini can state (a value of any type, a
 * union of structs, alternatives or tuple items of different types) is
 * refused as `Untyped`: `GoogleLanguageModel` then sends that tool's or
 * format's JSON Schema as it is (`parametersJsonSchema`, `responseJsonSchema`).
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"

/** A JSON Schema object. */
export type JsonSchema = { readonly [key: string]: unknown }

/** The deepest schema rewritten; deeper ones are refused. */
export const maxDepth = 64

const isString = (u: unknown): boolean => typeof u === "string"
const isCount = (u: unknown): boolean => typeof u === "number" && Number.isSafeInteger(u) && u >= 0
const isFiniteNumber = (u: unknown): boolean => typeof u === "number" && Number.isFinite(u)
const isAny = (u: unknown): boolean => u !== undefined

/** Keywords copied as they are, when their value has the form Gemini's schema gives them (others are dropped). */
const kept: ReadonlyArray<readonly [string, (u: unknown) => boolean]> = [
  ["title", isString],
  ["description", isString],
  ["nullable", (u) => typeof u === "boolean"],
  ["minItems", isCount],
  ["maxItems", isCount],
  ["minLength", isCount],
  ["maxLength", isCount],
  ["pattern", isString],
  ["minimum", isFiniteNumber],
  ["maximum", isFiniteNumber],
  ["minProperties", isCount],
  ["maxProperties", isCount],
  ["example", isAny],
  ["default", isAny],
  ["propertyOrdering", (u) => Array.isArray(u) && u.every(isString)]
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

/** Why a JSON Schema cannot be written as Gemini's schema. */
export interface Refusal {
  /**
   * `Untyped`: some (sub)schema has no type Gemini's schema can state (it may
   * still be sent as JSON Schema); `Unsupported`: it cannot be sent at all
   * (recursion, a `$ref` outside the schema, too deep).
   */
  readonly _tag: "Untyped" | "Unsupported"
  readonly reason: string
}

class Untyped extends Error {}

/** Where a subschema is, for messages (`properties.a.items`). */
const child = (path: string, key: string): string => path === "" ? key : `${path}.${key}`

/** Whether a rewritten schema is a bare string enum (`{ type: "STRING", enum }`, with a title or description at most). */
const isStringEnum = (schema: unknown): schema is { readonly type: "STRING"; readonly enum: ReadonlyArray<string> } =>
  isObject(schema) && schema.type === "STRING" && Array.isArray(schema.enum) &&
  Object.keys(schema).every((key) => key === "type" || key === "enum" || key === "title" || key === "description")

/** A rewritten schema without the keywords that only describe it (title, description). */
const shape = (schema: Record<string, unknown>): string => {
  const { title: _, description: __, ...rest } = schema
  return JSON.stringify(rest)
}

/**
 * Gives a rewritten schema its `type` where one can be stated, or throws
 * `Untyped`. Alternatives keep no `anyOf`: Gemini requires a type on every
 * schema and `@google/genai` refuses a type beside `anyOf`, so alternatives
 * are one schema (string enums as one enum, alike members as that member) or
 * cannot be stated.
 */
const typed = (out: Record<string, unknown>, path: string): Record<string, unknown> => {
  if (out.type !== undefined && out.anyOf === undefined) return out
  const where = path === "" ? "the schema" : `the schema at ${path}`
  if (Array.isArray(out.anyOf)) {
    const members = out.anyOf as ReadonlyArray<Record<string, unknown>>
    const types = [...new Set(members.map((member) => member.type))]
    if (types.length !== 1) {
      throw new Untyped(`${where} has alternatives of different types (${types.map(String).join(", ")}), which Gemini's schema cannot state`)
    }
    const { anyOf: _, ...rest } = out
    if (members.every(isStringEnum)) {
      return { type: "STRING", ...rest, enum: [...new Set(members.flatMap((member) => member.enum))] }
    }
    // Alternatives alike but for their titles (a tuple of strings, a numeric enum…) are that schema.
    const first = shape(members[0]!)
    if (members.every((member) => shape(member) === first)) {
      const { title: __, description: ___, ...alike } = members[0]!
      return { ...alike, ...rest }
    }
    throw new Untyped(
      `${where} has alternatives of type ${String(types[0])} that differ, which Gemini's schema cannot state (it takes no anyOf beside the type it requires)`
    )
  }
  if (out.nullable === true && Object.keys(out).every((key) => key === "nullable" || key === "title" || key === "description")) {
    const { nullable: _, ...rest } = out
    return { type: "NULL", ...rest }
  }
  throw new Untyped(`${where} allows a value of any type, which Gemini's schema cannot state`)
}

/** The bounds Gemini takes, with the stricter of two (all of an `allOf`'s members apply). */
const boundKeys: ReadonlyArray<readonly [string, (a: number, b: number) => number]> = [
  ["minItems", Math.max],
  ["minLength", Math.max],
  ["minProperties", Math.max],
  ["minimum", Math.max],
  ["maxItems", Math.min],
  ["maxLength", Math.min],
  ["maxProperties", Math.min],
  ["maximum", Math.min]
]

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

  rewrite(schema: unknown, depth: number, stack: ReadonlyArray<string>, path: string): Record<string, unknown> {
    return typed(this.node(schema, depth, stack, path), path)
  }

  private node(schema: unknown, depth: number, stack: ReadonlyArray<string>, path: string): Record<string, unknown> {
    if (depth > maxDepth) throw new Error(`the schema is nested deeper than ${maxDepth} levels`)
    if (schema === true || schema === undefined) return {}
    if (!isObject(schema)) throw new Error(`a schema must be an object, got ${JSON.stringify(schema) ?? String(schema)}`)
    if (typeof schema.$ref === "string") {
      const { $ref, ...rest } = schema
      const target = this.resolve($ref, stack)
      return this.rewrite({ ...target, ...rest }, depth + 1, [...stack, $ref], path)
    }
    const out: Record<string, unknown> = {}
    for (const [key, fits] of kept) if (fits(schema[key])) put(out, key, schema[key])

    // anyOf / oneOf: `null` members make the schema nullable; one member left is inlined.
    const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined
    if (alternatives !== undefined) {
      const members = alternatives.filter((member) => !(isObject(member) && member.type === "null"))
      if (members.length < alternatives.length) out.nullable = true
      if (members.length === 1) return { ...this.rewrite(members[0], depth + 1, stack, path), ...out }
      if (members.length > 1) {
        out.anyOf = members.map((member, i) => this.rewrite(member, depth + 1, stack, child(path, `anyOf[${i}]`)))
      }
      return out
    }
    if (Array.isArray(schema.allOf)) {
      // The schema's own keywords and each member's, merged (a member may be a bare bound such as `{ minLength: 5 }`).
      const { allOf, ...own } = schema
      const merged = [own, ...allOf].reduce<Record<string, unknown>>((acc, member) => {
        const next = this.node(member, depth + 1, stack, path)
        const properties = isObject(acc.properties) || isObject(next.properties)
          ? { ...(acc.properties as object | undefined), ...(next.properties as object | undefined) }
          : undefined
        const required = [
          ...(Array.isArray(acc.required) ? acc.required : []),
          ...(Array.isArray(next.required) ? next.required : [])
        ]
        const bounds: Record<string, unknown> = {}
        for (const [key, stricter] of boundKeys) {
          if (typeof acc[key] === "number" && typeof next[key] === "number") bounds[key] = stricter(acc[key], next[key])
        }
        return {
          ...acc,
          ...next,
          ...bounds,
          ...(properties === undefined ? {} : { properties }),
          ...(required.length === 0 ? {} : { required: [...new Set(required)] })
        }
      }, {})
      return merged
    }

    // type: a list of types becomes one type (+ nullable) or an anyOf.
    let type: string | undefined
    const declared = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type]
    const named = declared.filter((t): t is string => typeof t === "string" && types.has(t))
    if (declared.includes("null")) out.nullable = true
    if (named.length === 1) type = named[0]!.toUpperCase()
    else if (named.length > 1) {
      out.anyOf = named.map((t, i) => this.rewrite({ ...schema, type: t, nullable: undefined }, depth + 1, stack, child(path, `anyOf[${i}]`)))
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
      if (isObject(items)) out.items = this.rewrite(items, depth + 1, stack, child(path, "items"))
      else if (Array.isArray(items) && items.length > 0) out.items = this.rewrite({ anyOf: items }, depth + 1, stack, child(path, "items"))
    }
    if (isObject(schema.properties)) {
      const properties: Record<string, unknown> = {}
      for (const [name, property] of Object.entries(schema.properties)) {
        put(properties, name, this.rewrite(property, depth + 1, stack, child(path, `properties.${name}`)))
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

/**
 * Rewrites a JSON Schema into Gemini's schema subset, every (sub)schema with
 * its type, or says why it cannot (`Untyped` or `Unsupported`).
 *
 * @since 0.2.1
 */
export const rewrite = (schema: JsonSchema): Result.Result<JsonSchema, Refusal> => {
  try {
    return Result.succeed(new Rewriter(schema).rewrite(schema, 0, [], ""))
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return Result.fail({ _tag: error instanceof Untyped ? "Untyped" : "Unsupported", reason })
  }
}

/** Rewrites a JSON Schema into Gemini's schema subset, every (sub)schema with its type, or says why it cannot. */
export const fromJsonSchema = (schema: JsonSchema): Result.Result<JsonSchema, string> =>
  Result.mapError(rewrite(schema), (refusal) => refusal.reason)
