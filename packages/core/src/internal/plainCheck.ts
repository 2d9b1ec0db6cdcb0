/**
 * A fast check compiled from a Schema's AST, for the stored conversation
 * format: `true` only when the value is what the Schema accepts as it is, with
 * nothing to change (plain objects, no excess or `"__proto__"` key, no
 * transformation), so that Schema's decode or encode would return an equal
 * value. `false` means "not sure": the caller then runs the Schema itself,
 * which gives the real answer and its message. Anything this compiler does not
 * know (a transformation, a declaration other than `Json`) compiles to `false`,
 * so a Schema that grows is still checked exactly, only slower.
 *
 * @internal
 */
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { Json, jsonProblem, maxJsonDepth } from "./schema.js"

/** A compiled check. */
export type Check = (u: unknown) => boolean

const never: Check = () => false

const isPlainObject = (u: unknown): u is { readonly [key: string]: unknown } => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

const literalTag = (ast: AST.AST): AST.LiteralValue | undefined => {
  if (ast._tag !== "TypeLiteral") return undefined
  const tag = ast.propertySignatures.find((p) => p.name === "_tag")
  return tag !== undefined && tag.type._tag === "Literal" ? tag.type.literal : undefined
}

const compileUnion = (ast: AST.Union, parsed: boolean): Check => {
  const members = ast.types.map((type) => compile(type, parsed))
  const tags = ast.types.map(literalTag)
  // A tagged union (every member a struct with a literal `_tag`): one lookup instead of trying each.
  if (tags.every((tag) => typeof tag === "string") && new Set(tags).size === tags.length) {
    const byTag = new Map<unknown, Check>(tags.map((tag, i) => [tag, members[i]!]))
    return (u) => {
      if (!isPlainObject(u)) return false
      const check = byTag.get(u._tag)
      return check !== undefined && check(u)
    }
  }
  return (u) => members.some((check) => check(u))
}

const compileTypeLiteral = (ast: AST.TypeLiteral, parsed: boolean): Check => {
  if (ast.indexSignatures.length > 0) {
    const [index] = ast.indexSignatures
    if (ast.propertySignatures.length > 0 || ast.indexSignatures.length > 1 || index!.parameter._tag !== "StringKeyword") return never
    const value = compile(index!.type, parsed)
    return (u) => {
      if (!isPlainObject(u)) return false
      for (const key of Object.keys(u)) {
        if (key === "__proto__" || !value(u[key])) return false
      }
      return true
    }
  }
  const fields = new Map<string, Check>()
  let required = 0
  for (const p of ast.propertySignatures) {
    if (typeof p.name !== "string") return never
    fields.set(p.name, compile(p.type, parsed))
    if (!p.isOptional) required++
  }
  const optional = new Set(ast.propertySignatures.filter((p) => p.isOptional).map((p) => p.name))
  return (u) => {
    if (!isPlainObject(u)) return false
    let seen = 0
    for (const key of Object.keys(u)) {
      const check = fields.get(key)
      // An excess key (`__proto__` included): the Schema strips it or rejects it.
      if (check === undefined || !check(u[key])) return false
      if (!optional.has(key)) seen++
    }
    // A required field missing, or held where `Object.keys` does not see it (JSON would not write it).
    return seen === required
  }
}

const compileArray = (ast: AST.TupleType, parsed: boolean): Check => {
  if (ast.elements.length > 0 || ast.rest.length !== 1) return never
  const element = compile(ast.rest[0]!.type, parsed)
  return (u) => {
    if (!Array.isArray(u)) return false
    for (let i = 0; i < u.length; i++) if (!element(u[i])) return false
    return true
  }
}

const compileRefinement = (ast: AST.Refinement, parsed: boolean): Check => {
  const from = compile(ast.from, parsed)
  return (u) => from(u) && Option.isNone(ast.filter(u, AST.defaultParseOption, ast))
}

/**
 * `jsonProblem(u) === undefined` for a value `JSON.parse` made: such a value only holds null,
 * booleans, finite numbers, strings, arrays and plain data objects, so what is left to check is
 * the depth (the same limit, counted the same way) and `"__proto__"` keys.
 */
const parsedJsonOk = (v: unknown, depth: number): boolean => {
  if (typeof v !== "object" || v === null) return true
  if (depth >= maxJsonDepth) return false
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!parsedJsonOk(v[i], depth + 1)) return false
    return true
  }
  for (const key in v) {
    if (key === "__proto__" || !parsedJsonOk((v as { readonly [key: string]: unknown })[key], depth + 1)) return false
  }
  return true
}

/** Compiles the check of one AST node. */
const compile = (ast: AST.AST, parsed: boolean): Check => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "UndefinedKeyword":
      return (u) => u === undefined
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "Union":
      return compileUnion(ast, parsed)
    case "TypeLiteral":
      return compileTypeLiteral(ast, parsed)
    case "TupleType":
      return compileArray(ast, parsed)
    case "Refinement":
      return compileRefinement(ast, parsed)
    case "Declaration":
      // Stored JSON values: the same check the Schema's declaration makes; on what `JSON.parse` made
      // (only plain data, finite numbers, no accessors) that check comes down to depth and keys.
      return ast !== Json.ast ? never : parsed ? (u) => parsedJsonOk(u, 0) : (u) => jsonProblem(u) === undefined
    default:
      return never
  }
}

/**
 * The fast check of a Schema without transformations (its `Type` and `Encoded`
 * are the same): `true` only when the Schema accepts the value unchanged.
 */
export const make = <A>(schema: Schema.Schema<A, A>): ((u: unknown) => u is A) => compile(schema.ast, false) as (u: unknown) => u is A

/** `make` for values fresh from `JSON.parse` only (cheaper on stored JSON values; wrong on anything else). */
export const makeForParsed = <A>(schema: Schema.Schema<A, A>): ((u: unknown) => u is A) =>
  compile(schema.ast, true) as (u: unknown) => u is A
