/**
 * OpenAI's Structured Outputs subset of JSON Schema ("strict mode"), which
 * other providers follow too: the root is an object, every object is closed
 * (`additionalProperties: false`) and lists all its properties as required,
 * and only a few keywords are allowed.
 *
 * `make` brings a JSON Schema into that subset when it can: an optional
 * property becomes required and nullable (and `fromWire` maps the model's
 * `null` back to an absent property), constraints the subset cannot carry
 * (`minLength`, `default`, unknown formats…) move into the description so
 * the model still reads them, and metadata keywords (`$id`, `$comment`) are
 * dropped. What it cannot bring (a node accepting any value, tuples, records,
 * `allOf`…) is listed in `reasons`, and the schema is then to be sent
 * non-strict.
 *
 * @internal
 */
import type { JsonSchema } from "./jsonSchema.js"

/** A schema brought into the strict subset, or why it cannot be. */
export interface Strict {
  /** The schema to send with `strict: true` (meaningful only when `reasons` is empty). */
  readonly schema: JsonSchema
  /** Why the schema cannot be strict; empty when it can. */
  readonly reasons: ReadonlyArray<string>
  /** Whether `schema` differs from the input (properties made nullable, keywords moved or dropped). */
  readonly changed: boolean
  /** Maps a value the model produced for `schema` back to the input schema's terms (`null` → absent where added). */
  readonly fromWire: (json: unknown) => unknown
}

/** The most nested objects OpenAI accepts in a strict schema. */
export const maxDepth = 10

/** The most object properties OpenAI accepts in a strict schema, all objects together. */
export const maxProperties = 5000

/** The most values of all enums together OpenAI accepts in a strict schema. */
export const maxEnumValues = 1000

/** The `format`s strict mode supports. */
export const formats: ReadonlySet<string> = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid"
])

const types: ReadonlySet<string> = new Set(["string", "number", "integer", "boolean", "object", "array", "null"])

/** Keywords kept as they are. */
const kept: ReadonlySet<string> = new Set([
  "description",
  "title",
  "enum",
  "const",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems"
])

/** Constraints strict mode refuses, moved into the description. */
const described: ReadonlySet<string> = new Set([
  "minLength",
  "maxLength",
  "default",
  "examples",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "contentEncoding",
  "contentMediaType",
  "readOnly",
  "writeOnly",
  "deprecated"
])

/** Metadata dropped. */
const dropped: ReadonlySet<string> = new Set(["$id", "$comment", "$schema"])

type Node = { readonly [key: string]: unknown }

const isNode = (u: unknown): u is Node => typeof u === "object" && u !== null && !Array.isArray(u)

const own = (node: Node, key: string): unknown => Object.hasOwn(node, key) ? node[key] : undefined

interface Context {
  readonly reasons: Array<string>
  readonly nulled: WeakMap<Node, ReadonlySet<string>>
  /** Whether any property was made nullable (then `fromWire` has nulls to take out). */
  anyNulled: boolean
  changed: boolean
  properties: number
  enumValues: number
}

const typeList = (node: Node): ReadonlyArray<unknown> => {
  const type = own(node, "type")
  return Array.isArray(type) ? type : type === undefined ? [] : [type]
}

/** Whether a node already accepts `null`. */
const acceptsNull = (node: Node): boolean => {
  const anyOf = own(node, "anyOf")
  const enumValues = own(node, "enum")
  return typeList(node).includes("null") ||
    own(node, "const") === null ||
    (Array.isArray(enumValues) && enumValues.includes(null)) ||
    (Array.isArray(anyOf) && anyOf.some((branch) => isNode(branch) && acceptsNull(branch)))
}

/** The node, also accepting `null`. */
const nullable = (node: Node): Node => {
  const type = own(node, "type")
  const plain = own(node, "enum") === undefined && own(node, "const") === undefined
  if (typeof type === "string" && plain) return { ...node, type: [type, "null"] }
  const anyOf = own(node, "anyOf")
  if (Array.isArray(anyOf) && type === undefined) return { ...node, anyOf: [...anyOf, { type: "null" }] }
  return { anyOf: [node, { type: "null" }] }
}

const describe = (node: Node, notes: ReadonlyArray<string>): Node => {
  if (notes.length === 0) return node
  const text = `(${notes.join("; ")})`
  const description = own(node, "description")
  return { ...node, description: typeof description === "string" && description !== "" ? `${description} ${text}` : text }
}

const walkObject = (source: Node, out: Record<string, unknown>, path: string, level: number, ctx: Context): void => {
  const properties = own(source, "properties")
  const additional = own(source, "additionalProperties")
  if (additional !== undefined && additional !== false) {
    ctx.reasons.push(`${path}: an object open to other properties (a record or index signature)`)
  }
  if (properties === undefined) {
    if (additional === undefined) ctx.reasons.push(`${path}: an object with no declared properties`)
    out.properties = {}
    out.required = []
    out.additionalProperties = false
    return
  }
  if (!isNode(properties)) {
    ctx.reasons.push(`${path}: \`properties\` is not an object`)
    return
  }
  if (level > maxDepth) ctx.reasons.push(`${path}: objects nested deeper than ${maxDepth} levels`)
  const requiredList = own(source, "required")
  const required = new Set(Array.isArray(requiredList) ? requiredList : [])
  const nulled = new Set<string>()
  const entries = Object.entries(properties).map(([key, value]): [string, unknown] => {
    const child = walk(value, `${path}.${key}`, level, ctx)
    if (required.has(key) || !isNode(child) || acceptsNull(child)) return [key, child]
    nulled.add(key)
    return [key, nullable(child)]
  })
  ctx.properties += entries.length
  if (nulled.size > 0 || required.size !== entries.length || additional !== false) ctx.changed = true
  const node = Object.fromEntries(entries)
  out.properties = node
  out.required = entries.map(([key]) => key)
  out.additionalProperties = false
  if (nulled.size > 0) {
    ctx.nulled.set(out, nulled)
    ctx.anyNulled = true
  }
}

const walk = (schema: unknown, path: string, depth: number, ctx: Context): unknown => {
  if (!isNode(schema)) {
    ctx.reasons.push(`${path}: \`${JSON.stringify(schema)}\` is not a schema object`)
    return schema
  }
  const out: Record<string, unknown> = {}
  const notes: Array<string> = []
  let typed = false
  for (const [key, value] of Object.entries(schema)) {
    if (kept.has(key)) {
      out[key] = value
      if (key === "enum" || key === "const") typed = true
      if (key === "enum" && Array.isArray(value)) ctx.enumValues += value.length
    } else if (described.has(key)) {
      notes.push(`${key}: ${JSON.stringify(value)}`)
      ctx.changed = true
    } else if (dropped.has(key)) {
      ctx.changed = true
    } else if (key === "type") {
      if (typeList(schema).some((type) => typeof type !== "string" || !types.has(type))) {
        ctx.reasons.push(`${path}: unknown type ${JSON.stringify(value)}`)
      }
      out.type = value
      typed = true
    } else if (key === "format") {
      if (typeof value === "string" && formats.has(value)) out.format = value
      else {
        notes.push(`format: ${JSON.stringify(value)}`)
        ctx.changed = true
      }
    } else if (key === "$ref") {
      out.$ref = value
      typed = true
    } else if (key === "anyOf") {
      if (Array.isArray(value)) {
        out.anyOf = value.map((branch, i) => walk(branch, `${path}|${i}`, depth, ctx))
        typed = true
      } else ctx.reasons.push(`${path}: \`anyOf\` is not a list`)
    } else if (key === "items") {
      if (Array.isArray(value)) ctx.reasons.push(`${path}: a tuple (strict mode has no per-position items)`)
      else out.items = walk(value, `${path}[]`, depth, ctx)
    } else if (key === "additionalItems" || key === "prefixItems") {
      if (!Array.isArray(own(schema, "items"))) ctx.reasons.push(`${path}: a tuple (strict mode has no per-position items)`)
    } else if (key === "$defs" && path === "root") {
      out.$defs = isNode(value)
        ? Object.fromEntries(Object.entries(value).map(([name, def]) => [name, walk(def, `$defs.${name}`, 0, ctx)]))
        : value
    } else if (key !== "properties" && key !== "required" && key !== "additionalProperties") {
      ctx.reasons.push(`${path}: the keyword \`${key}\` is not supported in strict mode`)
    }
  }
  if (!typed) ctx.reasons.push(`${path}: a value of any type (the schema has no \`type\`)`)
  const isObject = typeList(schema).includes("object") || own(schema, "properties") !== undefined
  if (isObject) walkObject(schema, out, path, depth + 1, ctx)
  if (typeList(schema).includes("array") && own(schema, "items") === undefined) {
    ctx.reasons.push(`${path}: an array of values of any type`)
  }
  const result = describe(out, notes)
  if (result !== out && ctx.nulled.has(out)) ctx.nulled.set(result, ctx.nulled.get(out)!)
  return result
}

/** Brings `schema` into the strict subset, or says why it cannot be. */
export const make = (schema: JsonSchema): Strict => {
  const ctx: Context = { reasons: [], nulled: new WeakMap(), anyNulled: false, changed: false, properties: 0, enumValues: 0 }
  if (!typeList(schema).includes("object") || own(schema, "anyOf") !== undefined || own(schema, "$ref") !== undefined) {
    ctx.reasons.push("root: the top of the schema is not an object")
  }
  const out = walk(schema, "root", 0, ctx) as JsonSchema
  if (ctx.properties > maxProperties) ctx.reasons.push(`more than ${maxProperties} object properties in all`)
  if (ctx.enumValues > maxEnumValues) ctx.reasons.push(`more than ${maxEnumValues} enum values in all`)
  // Nothing was made nullable: what the model sends needs no mapping back (and no walk per call).
  const back = ctx.anyNulled ? (json: unknown) => fromWire(out, ctx.nulled, json) : (json: unknown) => json
  return { schema: out, reasons: ctx.reasons, changed: ctx.changed, fromWire: back }
}

// ---------------------------------------------------------------------------
// Back from the wire
// ---------------------------------------------------------------------------

/** How many `$ref`s may follow each other without reaching a value (a guard against reference loops). */
const maxRefChain = 64

const resolve = (root: JsonSchema, node: Node): Node | undefined => {
  let current: Node | undefined = node
  for (let i = 0; current !== undefined && i < maxRefChain; i++) {
    const ref = own(current, "$ref")
    if (typeof ref !== "string") return current
    if (ref === "#") current = root
    else if (ref.startsWith("#/$defs/")) {
      const defs = own(root, "$defs")
      const def = isNode(defs) ? own(defs, decodeURIComponent(ref.slice(8)).replace(/~1/g, "/").replace(/~0/g, "~")) : undefined
      current = isNode(def) ? def : undefined
    } else return undefined
  }
  return undefined
}

const isPlainObject = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** Whether an object value fits an object branch: its keys are the branch's properties, and its `enum`/`const` match. */
const fits = (root: JsonSchema, branch: Node, value: { readonly [key: string]: unknown }): boolean => {
  const properties = own(branch, "properties")
  if (!isNode(properties)) return false
  return Object.keys(value).every((key) => Object.hasOwn(properties, key)) &&
    Object.entries(properties).every(([key, p]) => {
      const child = isNode(p) ? resolve(root, p) : undefined
      if (child === undefined || !Object.hasOwn(value, key)) return true
      const constant = own(child, "const")
      const values = own(child, "enum")
      if (constant !== undefined && value[key] !== constant) return false
      return !Array.isArray(values) || values.includes(value[key])
    })
}

const branchFor = (root: JsonSchema, node: Node, value: unknown): Node | undefined => {
  const anyOf = own(node, "anyOf")
  if (!Array.isArray(anyOf)) return node
  for (const raw of anyOf) {
    const branch = isNode(raw) ? resolve(root, raw) : undefined
    if (branch === undefined) continue
    const picked = branchFor(root, branch, value)
    if (picked === undefined) continue
    if (Array.isArray(value) && own(picked, "items") !== undefined) return picked
    if (isPlainObject(value) && fits(root, picked, value)) return picked
  }
  return undefined
}

const fromWire = (root: JsonSchema, nulled: WeakMap<Node, ReadonlySet<string>>, json: unknown): unknown => {
  const go = (schema: unknown, value: unknown): unknown => {
    if (!isNode(schema) || typeof value !== "object" || value === null) return value
    const resolved = resolve(root, schema)
    const node = resolved === undefined ? undefined : branchFor(root, resolved, value)
    if (node === undefined) return value
    if (Array.isArray(value)) {
      const items = own(node, "items")
      return items === undefined ? value : value.map((item) => go(items, item))
    }
    const properties = own(node, "properties")
    if (!isNode(properties)) return value
    const drop = nulled.get(node)
    const entries = Object.entries(value)
      .filter(([key, v]) => !(v === null && drop?.has(key) === true))
      .map(([key, v]): [string, unknown] => [key, Object.hasOwn(properties, key) ? go(properties[key], v) : v])
    return Object.fromEntries(entries)
  }
  return go(root, json)
}
