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
  if (ast._tag !== "Objects") return undefined
  const tag = ast.propertySignatures.find((p) => p.name === "_tag")
  return tag !== undefined && tag.type._tag === "Literal" && tag.type.encoding === undefined && tag.type.checks === undefined
    ? tag.type.literal
    : undefined
}

const compileUnion = (ast: AST.Union, parsed: boolean): Check => {
  // "oneOf" unions reject a value more than one member accepts: leave those to the Schema.
  if (ast.options?.mode === "oneOf") return never
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

const compileRecord = (ast: AST.Objects, parsed: boolean): Check => {
  const [index] = ast.indexSignatures
  const parameter = index!.parameter
  if (
    ast.propertySignatures.length > 0 || ast.indexSignatures.length > 1 || parameter._tag !== "String" ||
    parameter.checks !== undefined || parameter.encoding !== undefined
  ) return never
  const value = compile(index!.type, parsed)
  return (u) => {
    if (!isPlainObject(u)) return false
    for (const key of Object.keys(u)) {
      if (key === "__proto__" || !value(u[key])) return false
    }
    return true
  }
}

const compileObjects = (ast: AST.Objects, parsed: boolean): Check => {
  if (ast.indexSignatures.length > 0) return compileRecord(ast, parsed)
  // An empty struct accepts any value but null and undefined, primitives included: leave it to the Schema.
  if (ast.propertySignatures.length === 0) return never
  const fields = new Map<string, Check>()
  const optional = new Set<string>()
  for (const p of ast.propertySignatures) {
    if (typeof p.name !== "string") return never
    fields.set(p.name, compile(p.type, parsed))
    if (AST.isOptional(p.type)) optional.add(p.name)
  }
  const required = fields.size - optional.size
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

const compileArray = (ast: AST.Arrays, parsed: boolean): Check => {
  if (ast.elements.length > 0 || ast.rest.length !== 1) return never
  const element = compile(ast.rest[0]!, parsed)
  return (u) => {
    if (!Array.isArray(u)) return false
    for (let i = 0; i < u.length; i++) if (!element(u[i])) return false
    return true
  }
}

const noOptions: AST.ParseOptions = {}

/** Whether a value passes a check of the Schema (a filter returns no issue; a group, none of its own). */
const passes = (check: AST.Check<unknown>, u: unknown, ast: AST.AST): boolean =>
  check._tag === "Filter" ? check.run(u, ast, noOptions) === undefined : check.checks.every((c) => passes(c, u, ast))

/** The node's checks (`isFinite`, `isBetween`, `isNonEmpty`…), run by the Schema's own code after its type matched. */
const withChecks = (ast: AST.AST, base: Check): Check => {
  const checks = ast.checks
  if (checks === undefined || base === never) return base
  return (u) => {
    if (!base(u)) return false
    for (const check of checks) if (!passes(check, u, ast)) return false
    return true
  }
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

/** Whether a declaration is `Json` (or a copy of it made to carry a key's context or annotations). */
const isJson = (ast: AST.Declaration): boolean => {
  const json = Json.ast as AST.Declaration
  return ast === json || (ast.run === json.run && ast.typeParameters.length === 0)
}

const compileSuspend = (ast: AST.Suspend, parsed: boolean): Check => {
  let check: Check | undefined
  return (u) => (check ??= compile(ast.thunk(), parsed))(u)
}

/** Compiles the check of one AST node, without its checks. */
const compileNode = (ast: AST.AST, parsed: boolean): Check => {
  switch (ast._tag) {
    case "String":
      return (u) => typeof u === "string"
    case "Number":
      return (u) => typeof u === "number"
    case "Boolean":
      return (u) => typeof u === "boolean"
    case "Null":
      return (u) => u === null
    case "Undefined":
      return (u) => u === undefined
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "Union":
      return compileUnion(ast, parsed)
    case "Objects":
      return compileObjects(ast, parsed)
    case "Arrays":
      return compileArray(ast, parsed)
    case "Suspend":
      return compileSuspend(ast, parsed)
    case "Declaration":
      // Stored JSON values: the same check the Schema's declaration makes; on what `JSON.parse` made
      // (only plain data, finite numbers, no accessors) that check comes down to depth and keys.
      return !isJson(ast) ? never : parsed ? (u) => parsedJsonOk(u, 0) : (u) => jsonProblem(u) === undefined
    default:
      return never
  }
}

/** Compiles the check of one AST node; a node with a transformation (an encoding) is left to the Schema. */
const compile = (ast: AST.AST, parsed: boolean): Check =>
  ast.encoding !== undefined ? never : withChecks(ast, compileNode(ast, parsed))

/**
 * The fast check of a Schema without transformations (its `Type` and `Encoded`
 * are the same): `true` only when the Schema accepts the value unchanged.
 */
export const make = <A>(schema: Schema.Codec<A, A>): ((u: unknown) => u is A) => compile(schema.ast, false) as (u: unknown) => u is A

/** `make` for values fresh from `JSON.parse` only (cheaper on stored JSON values; wrong on anything else). */
export const makeForParsed = <A>(schema: Schema.Codec<A, A>): ((u: unknown) => u is A) =>
  compile(schema.ast, true) as (u: unknown) => u is A
