/**
 * The JSON Schema providers are sent for tool parameters and structured
 * output, written from a Schema's AST exactly as chat-ts 0.1 wrote it (Effect
 * 3's `JSONSchema.make`, draft-07): the encoded side of the schema, optional
 * properties left out of `required`, `anyOf` for unions, `enum` for literals,
 * `$defs` and `$ref` only for recursion (a suspended schema with an
 * identifier), and the titles and descriptions Effect 3 gave its built-in
 * refinements (`minLength(2)`, "a string at least 2 character(s) long"…).
 * Effect 4's own `Schema.toJsonSchemaDocument` writes draft 2020-12 with other
 * texts and shapes; what providers receive must not change with the port (the
 * v0.1 fixture `json-schemas.json` records it).
 *
 * The top is always an object schema where it can be: providers reject a
 * top-level `$ref`, and an empty struct is sent as a closed, empty object.
 * The `$id`s Effect 3 wrote on `unknown`, `any`, `object`… (`/schemas/unknown`)
 * are not sent.
 *
 * What 0.1 could not write (a declaration such as `Date`, a symbol, a bigint,
 * `undefined` outside an optional property, recursion without an identifier)
 * throws, with the first line of Effect 3's message ("Missing annotation"…).
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/** A JSON Schema object, without `$schema`. */
export type JsonSchema = { readonly [key: string]: unknown }

type Node = { [key: string]: unknown }

/** The JSON Schema of a schema's encoded side, with its top-level definition inlined. */
export const make = (ast: AST.AST): JsonSchema => {
  const encoded = AST.toEncoded(ast)
  if (AST.isObjects(encoded) && encoded.propertySignatures.length === 0 && encoded.indexSignatures.length === 0) {
    return { type: "object", properties: {}, required: [], additionalProperties: false }
  }
  const defs: Record<string, JsonSchema> = {}
  const root = go(ast, { defs, path: [], ignoreIdentifier: false })
  return unmark(Object.keys(defs).length === 0 ? root : { ...root, $defs: defs })
}

/**
 * The `$id`s (and the `$comment`) this module writes to recognise its own
 * nodes while it builds (`/schemas/unknown`…): Effect 3 left them in what it
 * sent, where they say nothing to a model and may be read as a base URI; they
 * are taken out once the schema is made.
 */
const markers: ReadonlySet<string> = new Set([
  "/schemas/never",
  "/schemas/void",
  "/schemas/unknown",
  "/schemas/any",
  "/schemas/object",
  "/schemas/%7B%7D",
  "/schemas/enums"
])

/** Keywords whose value is a map of names to subschemas. */
const schemaMaps: ReadonlySet<string> = new Set(["properties", "patternProperties", "$defs"])

/** Keywords whose value is a subschema or a list of them. */
const schemaValues: ReadonlySet<string> = new Set([
  "items",
  "additionalItems",
  "additionalProperties",
  "propertyNames",
  "not",
  "anyOf",
  "allOf",
  "oneOf"
])

const isNode = (u: unknown): u is Node => typeof u === "object" && u !== null && !Array.isArray(u)

/** Sets a key without touching the prototype (a property may be called `__proto__`). */
const put = (target: Node, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/** The schema without this module's markers, in every subschema (values such as `default` and `enum` untouched). */
const unmark = (json: Node): Node => {
  const out: Node = {}
  for (const [key, value] of Object.entries(json)) {
    if ((key === "$id" || key === "$comment") && typeof value === "string" && markers.has(value)) continue
    if (schemaMaps.has(key) && isNode(value)) {
      const map: Node = {}
      for (const [name, schema] of Object.entries(value)) put(map, name, isNode(schema) ? unmark(schema) : schema)
      put(out, key, map)
    } else if (schemaValues.has(key)) {
      put(out, key, Array.isArray(value) ? value.map((v) => isNode(v) ? unmark(v) : v) : isNode(value) ? unmark(value) : value)
    } else {
      put(out, key, value)
    }
  }
  return out
}

interface Context {
  readonly defs: Record<string, JsonSchema>
  readonly path: ReadonlyArray<PropertyKey>
  /** Write a suspended schema's body instead of a `$ref` to it (when writing its definition). */
  readonly ignoreIdentifier: boolean
}

const at = (ctx: Context, key: PropertyKey): Context => ({ defs: ctx.defs, path: [...ctx.path, key], ignoreIdentifier: false })

const inner = (ctx: Context): Context => ctx.ignoreIdentifier ? { ...ctx, ignoreIdentifier: false } : ctx

const failure = (reason: string, ctx: Context, details: string): Error =>
  new Error(`${reason}${ctx.path.length > 0 ? `\nat path: [${ctx.path.map((k) => JSON.stringify(String(k))).join("][")}]` : ""}\ndetails: ${details}`)

const missingAnnotation = (ctx: Context, ast: AST.AST): Error =>
  failure("Missing annotation", ctx, `Generating a JSON Schema for this schema requires a "jsonSchema" annotation\nschema (${ast._tag})`)

// ---------------------------------------------------------------------------
// Annotations
// ---------------------------------------------------------------------------

/** Effect 4's `expected` texts of the encoded side of its codecs, as Effect 3 described the same sides. */
const encodedDescriptions: ReadonlyMap<string, string> = new Map([
  ["a string that will be decoded as a number", "a string to be decoded into a number"],
  ["a string that will be decoded as a Date", "a string to be decoded into a Date"],
  ["a string that will be decoded as a DateTime.Utc", "a string to be decoded into a DateTime.Utc"],
  ["a string that will be decoded as a URL", "a string to be decoded into a URL"],
  ["a string that will be decoded as a BigDecimal", "a string to be decoded into a BigDecimal"],
  ["a string that will be decoded as JSON", "a string to be decoded into JSON"],
  ["a string that will be decoded as a trimmed string", "a string that will be trimmed"]
])

/** The titles Effect 3 gave its keywords (kept in the JSON Schema; those of string, number and boolean were not). */
const keywordAnnotations: Partial<Record<AST.AST["_tag"], { readonly title: string; readonly description?: string }>> = {
  Unknown: { title: "unknown" },
  Any: { title: "any" },
  Never: { title: "never" },
  Void: { title: "void" },
  ObjectKeyword: { title: "object", description: "an object in the TypeScript meaning, i.e. the `object` type" }
}

const isJsonValue = (u: unknown, depth = 0): boolean => {
  if (u === null || typeof u === "string" || typeof u === "boolean") return true
  if (typeof u === "number") return Number.isFinite(u)
  if (typeof u !== "object" || depth > 64) return false
  if (Array.isArray(u)) return u.every((v) => isJsonValue(v, depth + 1))
  const proto = Object.getPrototypeOf(u)
  return (proto === null || proto === Object.prototype) && Object.getOwnPropertySymbols(u).length === 0 &&
    Object.values(u).every((v) => isJsonValue(v, depth + 1))
}

/** A value of `ast`'s type in its encoded, JSON form (as Effect 3 wrote defaults and examples), if it has one. */
const encodeValue = (ast: AST.AST, value: unknown): Option.Option<unknown> => {
  try {
    return Option.filter(
      Schema.encodeUnknownOption(Schema.make<Schema.Codec<unknown>>(ast))(value),
      (encoded) => isJsonValue(encoded)
    )
  } catch {
    return Option.none()
  }
}

/** The JSON Schema annotations (description, title, default, examples) of a set of Schema annotations. */
const jsonAnnotations = (ast: AST.AST, annotations: Schema.Annotations.Annotations | undefined): Node | undefined => {
  if (annotations === undefined) return undefined
  const out: Node = {}
  const expected = annotations.expected
  const description = typeof annotations.description === "string"
    ? annotations.description
    : typeof expected === "string"
    ? encodedDescriptions.get(expected)
    : undefined
  if (description !== undefined) out.description = description
  if (typeof annotations.title === "string") out.title = annotations.title
  if (Object.hasOwn(annotations, "default")) {
    const value = encodeValue(ast, annotations.default)
    if (Option.isSome(value)) out.default = value.value
  }
  if (Array.isArray(annotations.examples)) {
    const examples = annotations.examples.flatMap((example) => Option.toArray(encodeValue(ast, example)))
    if (examples.length > 0) out.examples = examples
  }
  return Object.keys(out).length === 0 ? undefined : out
}

/** Adds annotations to a schema; a `$ref` cannot carry siblings in draft-07, so it is wrapped in `allOf`. */
const addAnnotations = (json: Node, annotations: Node | undefined): Node =>
  annotations === undefined ? json : "$ref" in json ? { allOf: [json], ...annotations } : { ...json, ...annotations }

/** The JSON Schema keywords a schema's annotations set directly (Effect 4's `format`…, Effect 3's `jsonSchema`). */
const keywordsOf = (annotations: Schema.Annotations.Annotations | undefined): Node | undefined => {
  if (annotations === undefined) return undefined
  const out: Node = {}
  for (const key of ["format", "contentEncoding", "contentMediaType", "readOnly", "writeOnly"]) {
    if (annotations[key] !== undefined) out[key] = annotations[key]
  }
  const jsonSchema = annotations.jsonSchema
  if (typeof jsonSchema === "object" && jsonSchema !== null && !Array.isArray(jsonSchema)) Object.assign(out, jsonSchema)
  return Object.keys(out).length === 0 ? undefined : out
}

/** Whether keywords replace the schema rather than add to it (as Effect 3 read its `jsonSchema` annotation). */
const overrides = (keywords: Node): boolean => "type" in keywords || "oneOf" in keywords || "anyOf" in keywords || "$ref" in keywords

// ---------------------------------------------------------------------------
// Checks (Effect 3's refinements)
// ---------------------------------------------------------------------------

/** What Effect 3 wrote for one of its refinements: its title, its description, its keywords. */
interface Refinement {
  readonly title?: string
  readonly description?: string
  readonly keywords: Node
}

type Payload = { readonly [key: string]: unknown }

const num = (payload: Payload, key: string): number => Number(payload[key])

/** Effect 3's UUID pattern (Effect 4 checks versions and variants more strictly). */
const uuidPattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"

const lengthRefinement = (id: string, payload: Payload, type: unknown): Refinement | undefined => {
  const isString = type === "string"
  const isArray = type === "array"
  if (!isString && !isArray) return undefined
  switch (id) {
    case "isMinLength": {
      const n = num(payload, "minLength")
      if (isArray) return { title: `minItems(${n})`, description: `an array of at least ${n} item(s)`, keywords: { minItems: n } }
      return n === 1
        ? { title: "nonEmptyString", description: "a non empty string", keywords: { minLength: n } }
        : { title: `minLength(${n})`, description: `a string at least ${n} character(s) long`, keywords: { minLength: n } }
    }
    case "isMaxLength": {
      const n = num(payload, "maxLength")
      return isArray
        ? { title: `maxItems(${n})`, description: `an array of at most ${n} item(s)`, keywords: { maxItems: n } }
        : { title: `maxLength(${n})`, description: `a string at most ${n} character(s) long`, keywords: { maxLength: n } }
    }
    case "isBetweenLength": {
      const min = num(payload, "minimum")
      const max = num(payload, "maximum")
      if (isArray) {
        return min === max
          ? { title: `itemsCount(${min})`, description: `an array of exactly ${min} item(s)`, keywords: { minItems: min, maxItems: max } }
          : { keywords: { minItems: min, maxItems: max } }
      }
      if (min !== max) {
        return {
          title: `length({ min: ${min}, max: ${max})`,
          description: `a string at least ${min} character(s) and at most ${max} character(s) long`,
          keywords: { minLength: min, maxLength: max }
        }
      }
      return {
        title: `length(${min})`,
        description: min === 1 ? "a single character" : `a string ${min} character(s) long`,
        keywords: { minLength: min, maxLength: min }
      }
    }
    default:
      return undefined
  }
}

const bound = (
  n: number,
  zero: { readonly title: string; readonly description: string },
  name: string,
  text: string,
  keyword: string
): Refinement =>
  n === 0
    ? { ...zero, keywords: { [keyword]: n } }
    : { title: `${name}(${n})`, description: `${text} ${n}`, keywords: { [keyword]: n } }

const numberRefinement = (id: string, payload: Payload): Refinement | undefined => {
  switch (id) {
    case "isInt":
      return { title: "int", description: "an integer", keywords: { type: "integer" } }
    case "isFinite":
      return { title: "finite", description: "a finite number", keywords: {} }
    case "isGreaterThan":
      return bound(num(payload, "exclusiveMinimum"), { title: "positive", description: "a positive number" }, "greaterThan", "a number greater than", "exclusiveMinimum")
    case "isGreaterThanOrEqualTo":
      return bound(num(payload, "minimum"), { title: "nonNegative", description: "a non-negative number" }, "greaterThanOrEqualTo", "a number greater than or equal to", "minimum")
    case "isLessThan":
      return bound(num(payload, "exclusiveMaximum"), { title: "negative", description: "a negative number" }, "lessThan", "a number less than", "exclusiveMaximum")
    case "isLessThanOrEqualTo":
      return bound(num(payload, "maximum"), { title: "nonPositive", description: "a non-positive number" }, "lessThanOrEqualTo", "a number less than or equal to", "maximum")
    case "isBetween": {
      const min = num(payload, "minimum")
      const max = num(payload, "maximum")
      if (payload.exclusiveMinimum === true || payload.exclusiveMaximum === true) {
        return {
          keywords: {
            [payload.exclusiveMinimum === true ? "exclusiveMinimum" : "minimum"]: min,
            [payload.exclusiveMaximum === true ? "exclusiveMaximum" : "maximum"]: max
          }
        }
      }
      return { title: `between(${min}, ${max})`, description: `a number between ${min} and ${max}`, keywords: { minimum: min, maximum: max } }
    }
    case "isMultipleOf": {
      const d = num(payload, "divisor")
      return { title: `multipleOf(${d})`, description: `a number divisible by ${d}`, keywords: { multipleOf: d } }
    }
    default:
      return undefined
  }
}

const stringRefinements: Readonly<Record<string, Refinement>> = {
  isTrimmed: { title: "trimmed", description: "a string with no leading or trailing whitespace", keywords: { pattern: "^\\S[\\s\\S]*\\S$|^\\S$|^$" } },
  isLowercased: { title: "lowercased", description: "a lowercase string", keywords: { pattern: "^[^A-Z]*$" } },
  isUppercased: { title: "uppercased", description: "an uppercase string", keywords: { pattern: "^[^a-z]*$" } },
  isCapitalized: { title: "capitalized", description: "a capitalized string", keywords: { pattern: "^[^a-z]?.*$" } },
  isUncapitalized: { title: "uncapitalized", description: "a uncapitalized string", keywords: { pattern: "^[^A-Z]?.*$" } },
  isULID: { description: "a Universally Unique Lexicographically Sortable Identifier", keywords: { pattern: "^[0-7][0-9A-HJKMNP-TV-Z]{25}$" } }
}

const stringRefinement = (id: string, payload: Payload): Refinement | undefined => {
  const affix = (key: string, name: string, text: string, pattern: (s: string) => string): Refinement => {
    const value = String(payload[key])
    const formatted = JSON.stringify(value)
    return { title: `${name}(${formatted})`, description: `${text} ${formatted}`, keywords: { pattern: pattern(value) } }
  }
  switch (id) {
    case "isPattern":
      return { description: `a string matching the pattern ${String(payload.source)}`, keywords: { pattern: payload.source } }
    case "isUUID":
      // Effect 3 had one UUID schema (any version); the pattern sent stays its pattern.
      return { description: "a Universally Unique Identifier", keywords: { format: "uuid", pattern: uuidPattern } }
    case "isStartingWith":
      return affix("startsWith", "startsWith", "a string starting with", (s) => `^${s}`)
    case "isEndingWith":
      return affix("endsWith", "endsWith", "a string ending with", (s) => `^.*${s}$`)
    case "isIncluding":
      return affix("includes", "includes", "a string including", (s) => `.*${s}.*`)
    default:
      return stringRefinements[id]
  }
}

/** What Effect 3 wrote for the refinement this check is, or `undefined` for a check it knew nothing about. */
const refinementOf = (filter: AST.Filter<unknown>, type: unknown): Refinement | undefined => {
  const representation = filter.annotations?.representation as { readonly id?: unknown; readonly payload?: unknown } | undefined
  const fullId = representation?.id
  if (typeof fullId !== "string" || !fullId.startsWith("effect/schema/")) return undefined
  const id = fullId.slice("effect/schema/".length)
  const payload = (typeof representation?.payload === "object" && representation.payload !== null ? representation.payload : {}) as Payload
  return lengthRefinement(id, payload, type) ?? numberRefinement(id, payload) ?? stringRefinement(id, payload)
}

/** Effect 3's merge of a refinement into its base: when both bound the same way, the stricter base bound is kept in `allOf`. */
const mergeRefinement = (from: Node, keywords: Node, annotations: Node | undefined): Node => {
  const out: Node = { ...from, ...annotations, ...keywords }
  let allOf: Array<Node> = Array.isArray(out.allOf) ? (out.allOf as Array<Node>) : []
  const keep = (name: string, stricter: (base: number, refined: number) => boolean) => {
    if (name in keywords && name in from) {
      allOf = [{ [name]: from[name] }, ...allOf].filter((item) =>
        !(name in item) || stricter(item[name] as number, keywords[name] as number)
      )
    }
  }
  keep("minLength", (b, r) => b > r)
  keep("maxLength", (b, r) => b < r)
  keep("minItems", (b, r) => b > r)
  keep("maxItems", (b, r) => b < r)
  keep("minimum", (b, r) => b > r)
  keep("maximum", (b, r) => b < r)
  keep("exclusiveMinimum", (b, r) => b > r)
  keep("exclusiveMaximum", (b, r) => b < r)
  keep("multipleOf", (b, r) => b !== r)
  if ("pattern" in keywords && "pattern" in from && from.pattern !== keywords.pattern) allOf = [{ pattern: from.pattern }, ...allOf]
  if (allOf.length === 0) delete out.allOf
  else out.allOf = allOf
  return out
}

const flatten = (checks: AST.Checks): ReadonlyArray<AST.Filter<unknown>> =>
  checks.flatMap((check) => check._tag === "Filter" ? [check] : flatten(check.checks))

/** The schema with its checks applied in order, as Effect 3 applied a chain of refinements. */
const withChecks = (ast: AST.AST, base: Node): Node => {
  if (ast.checks === undefined) return base
  let out = base
  for (const filter of flatten(ast.checks)) {
    const own = keywordsOf(filter.annotations)
    if (own !== undefined && overrides(own) && !(own.type === "integer" && out.type === "number")) {
      out = own
      continue
    }
    const refinement = refinementOf(filter, out.type)
    // A check Effect 3 knew nothing about (a custom filter) leaves the schema as it was.
    if (refinement === undefined && own === undefined) continue
    const builtIn: Node = {}
    if (refinement?.description !== undefined) builtIn.description = refinement.description
    if (refinement?.title !== undefined) builtIn.title = refinement.title
    const annotations = { ...builtIn, ...jsonAnnotations(ast, filter.annotations) }
    out = mergeRefinement(out, { ...refinement?.keywords, ...own }, Object.keys(annotations).length === 0 ? undefined : annotations)
  }
  return out
}

// ---------------------------------------------------------------------------
// Nodes
// ---------------------------------------------------------------------------

const go = (ast: AST.AST, ctx: Context): Node => {
  if (AST.isSuspend(ast)) return suspended(ast, ctx)
  // The encoded side: what providers send. Checks of the decoded side are not sent (as in 0.1).
  if (ast.encoding !== undefined) {
    const encoded = go(ast.encoding[ast.encoding.length - 1]!.to, inner(ctx))
    return addAnnotations(encoded, jsonAnnotations(ast, ast.annotations))
  }
  const keywords = keywordsOf(ast.annotations)
  if (keywords !== undefined && overrides(keywords)) {
    return ast._tag === "Declaration" ? addAnnotations(keywords, jsonAnnotations(ast, ast.annotations)) : keywords
  }
  const base = body(ast, inner(ctx))
  const builtIn = keywordAnnotations[ast._tag]
  const annotated = addAnnotations(base, jsonAnnotations(ast, builtIn === undefined ? ast.annotations : { ...builtIn, ...ast.annotations }))
  return withChecks(ast, keywords === undefined ? annotated : { ...annotated, ...keywords })
}

/** A recursive schema: a `$ref` to its definition under its identifier (written once). */
const suspended = (ast: AST.Suspend, ctx: Context): Node => {
  if (ctx.ignoreIdentifier) return go(ast.thunk(), { ...ctx, ignoreIdentifier: false })
  const id = AST.resolveIdentifier(ast) ?? AST.resolveIdentifier(ast.thunk())
  if (id === undefined) {
    throw failure("Missing annotation", ctx, "Generating a JSON Schema for this schema requires an \"identifier\" annotation\nschema (Suspend)")
  }
  const ref = { $ref: `#/$defs/${id.replace(/~/g, "~0").replace(/\//g, "~1")}` }
  if (!Object.hasOwn(ctx.defs, id)) {
    ctx.defs[id] = ref
    ctx.defs[id] = go(ast, { ...ctx, ignoreIdentifier: true })
  }
  return ref
}

/** The schema of a node without its annotations and checks. */
const body = (ast: AST.AST, ctx: Context): Node => {
  switch (ast._tag) {
    case "Never":
      return { $id: "/schemas/never", not: {} }
    case "Void":
      return { $id: "/schemas/void" }
    case "Unknown":
      return { $id: "/schemas/unknown" }
    case "Any":
      return { $id: "/schemas/any" }
    case "ObjectKeyword":
      return { $id: "/schemas/object", anyOf: [{ type: "object" }, { type: "array" }] }
    case "String":
      return { type: "string" }
    case "Number":
      return { type: "number" }
    case "Boolean":
      return { type: "boolean" }
    case "Null":
      return { type: "null" }
    case "Literal":
      return literal(ast, ctx)
    case "Enum": {
      const anyOf = ast.enums.map(([title, value]) => ({ type: typeof value === "number" ? "number" : "string", title, enum: [value] }))
      return anyOf.length > 0 ? { $comment: "/schemas/enums", anyOf } : { $id: "/schemas/never", not: {}, title: "never" }
    }
    case "TemplateLiteral":
      return { type: "string", title: templateTitle(ast), description: "a template literal", pattern: `^${templatePattern(ast)}$` }
    case "Arrays":
      return arrays(ast, ctx)
    case "Objects":
      return objects(ast, ctx)
    case "Union":
      return union(ast, ctx)
    default:
      // Declarations (Date, classes without an encoding…), undefined, bigint and symbols: 0.1 had no JSON Schema for them.
      throw missingAnnotation(ctx, ast)
  }
}

const literal = (ast: AST.Literal, ctx: Context): Node => {
  const value = ast.literal
  switch (typeof value) {
    case "string":
      return { type: "string", enum: [value] }
    case "number":
      return { type: "number", enum: [value] }
    case "boolean":
      return { type: "boolean", enum: [value] }
    default:
      throw missingAnnotation(ctx, ast)
  }
}

const escapeRegExp = (s: string): string => s.replace(/[/\\^$*+?.()|[\]{}]/g, "\\$&")

const templatePattern = (ast: AST.TemplateLiteral): string =>
  ast.parts.map((part): string => {
    switch (part._tag) {
      case "String":
        return "[\\s\\S]*?"
      case "Number":
        return "[+-]?\\d*\\.?\\d+(?:[Ee][+-]?\\d+)?"
      case "Literal":
        return escapeRegExp(String(part.literal))
      case "TemplateLiteral":
        return templatePattern(part)
      case "Union":
        return `(${part.types.map((t) => templatePattern(new AST.TemplateLiteral([t]))).join("|")})`
      default:
        return "[\\s\\S]*?"
    }
  }).join("")

const templateTitle = (ast: AST.TemplateLiteral): string =>
  "`" + ast.parts.map((part) => part._tag === "Literal" ? String(part.literal) : `\${${part._tag.toLowerCase()}}`).join("") + "`"

/** Context (key) annotations of an element or property, added to its schema. */
const keyAnnotations = (ast: AST.AST): Node | undefined => jsonAnnotations(ast, ast.context?.annotations)

const arrays = (ast: AST.Arrays, ctx: Context): Node => {
  const elements = ast.elements.map((e, i) => addAnnotations(go(e, at(ctx, i)), keyAnnotations(e)))
  const rest = ast.rest.map((r) => addAnnotations(go(r, ctx), keyAnnotations(r)))
  const out: Node = { type: "array" }
  const len = ast.elements.length
  if (len > 0) {
    out.minItems = len - ast.elements.filter((e) => AST.isOptional(e)).length
    out.items = elements
  }
  if (rest.length > 0) {
    if (rest.length > 1) {
      throw failure(
        "Generating a JSON Schema for post-rest elements is not currently supported. You're welcome to contribute by submitting a Pull Request",
        ctx,
        "post-rest elements"
      )
    }
    const isHomogeneous = ast.elements.every((e) => e === ast.rest[0])
    if (isHomogeneous) out.items = rest[0]
    else out.additionalItems = rest[0]
  } else if (len > 0) {
    out.additionalItems = false
  } else {
    out.maxItems = 0
  }
  return out
}

/** `ast` without `undefined` (in unions, through suspensions), or `undefined` when it has none to take out. */
const pruneUndefined = (ast: AST.AST): AST.AST | undefined => {
  if (keywordsOf(ast.annotations) !== undefined) return undefined
  switch (ast._tag) {
    case "Undefined":
      return AST.never
    case "Union": {
      let pruned = false
      const types: Array<AST.AST> = []
      for (const type of ast.types) {
        const without = pruneUndefined(type)
        if (without === undefined) types.push(type)
        else {
          pruned = true
          if (without._tag !== "Never") types.push(without)
        }
      }
      if (!pruned) return undefined
      return types.length === 0 ? AST.never : types.length === 1 ? types[0]! : new AST.Union(types)
    }
    case "Suspend":
      return pruneUndefined(ast.thunk())
    default:
      return ast.encoding === undefined ? undefined : pruneUndefined(ast.encoding[ast.encoding.length - 1]!.to)
  }
}

const objects = (ast: AST.Objects, ctx: Context): Node => {
  if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return { $id: "/schemas/%7B%7D", anyOf: [{ type: "object" }, { type: "array" }] }
  }
  const required: Array<string> = []
  const properties: Node = {}
  const out: Node = { type: "object", required, properties, additionalProperties: false }
  let patternProperties: Node | undefined
  let propertyNames: Node | undefined
  for (const is of ast.indexSignatures) {
    const value = pruneUndefined(is.type) ?? is.type
    const parameter = is.parameter
    if (parameter._tag === "String" && parameter.checks === undefined) {
      const additional = go(value, ctx)
      out.additionalProperties = isPlainNever(additional) ? false : additional
    } else if (parameter._tag === "String" || parameter._tag === "TemplateLiteral") {
      patternProperties = go(value, ctx)
      propertyNames = go(parameter, ctx)
    } else if (parameter._tag === "Symbol") {
      out.additionalProperties = go(value, at(ctx, "[symbol]"))
      propertyNames = go(parameter, at(ctx, "[symbol]"))
    }
  }
  for (const ps of ast.propertySignatures) {
    if (typeof ps.name !== "string") {
      throw failure("Unsupported key", ctx, `Cannot encode ${String(ps.name)} key to JSON Schema`)
    }
    const pruned = pruneUndefined(ps.type)
    const type = pruned ?? ps.type
    // An optional property's own annotations (`Schema.optional(X).annotate(…)`) are the property's, as in 0.1.
    const own = pruned === undefined ? undefined : jsonAnnotations(ps.type, ps.type.annotations)
    const key = keyAnnotations(ps.type)
    Object.defineProperty(properties, ps.name, {
      value: addAnnotations(go(type, at(ctx, ps.name)), own === undefined && key === undefined ? undefined : { ...own, ...key }),
      enumerable: true,
      writable: true,
      configurable: true
    })
    if (!AST.isOptional(AST.toEncoded(ps.type)) && pruned === undefined) required.push(ps.name)
  }
  if (patternProperties !== undefined) {
    delete out.additionalProperties
    out.patternProperties = { "": patternProperties }
  }
  if (propertyNames !== undefined) out.propertyNames = propertyNames
  return out
}

const isPlainNever = (json: Node): boolean =>
  json.$id === "/schemas/never" && Object.keys(json).length === 3 && json.title === "never"

const isTop = (json: Node): boolean =>
  json.$id === "/schemas/any" || json.$id === "/schemas/unknown" || json.$id === "/schemas/void"

const isCompactableLiteral = (json: Node | undefined): json is Node & { readonly enum: ReadonlyArray<unknown> } =>
  json !== undefined && Array.isArray(json.enum) && "type" in json && Object.keys(json).length === 2

const union = (ast: AST.Union, ctx: Context): Node => {
  const anyOf: Array<Node> = []
  for (const member of ast.types.map((type) => go(type, ctx))) {
    if (isPlainNever(member)) continue
    if (isTop(member)) return member
    const last = anyOf[anyOf.length - 1]
    if (isCompactableLiteral(member) && isCompactableLiteral(last) && last.type === member.type) {
      anyOf[anyOf.length - 1] = { type: last.type, enum: [...last.enum, ...member.enum] }
      continue
    }
    anyOf.push(member)
  }
  return anyOf.length === 0 ? { $id: "/schemas/never", not: {} } : anyOf.length === 1 ? anyOf[0]! : { anyOf }
}
