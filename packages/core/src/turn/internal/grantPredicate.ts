/**
 * The argument predicates of grants: a small, total language over a call's
 * canonical arguments (parsed JSON), written as plain data so that it is
 * stored in the messages and read back unchanged.
 *
 * A predicate is one of:
 * - `{ "path": [...], "equals": <json> }`: the value at `path` is that JSON value (deep, key order ignored);
 * - `{ "path": [...], "oneOf": [<json>, ...] }`: it equals one of them;
 * - `{ "path": [...], "prefix": "…" }` / `{ "path": [...], "suffix": "…" }`: it is a string starting / ending so;
 * - `{ "all": [p, ...] }`, `{ "any": [p, ...] }`, `{ "not": p }`: and, or, not.
 *
 * A path is a list of object keys (strings) and array indices (integers ≥ 0)
 * from the arguments' root; `[]` is the root. Only own properties of plain
 * objects and elements of arrays are followed (never a prototype), a
 * `"__proto__"` key is refused, and a missing value satisfies no comparison.
 * A predicate is checked before it is stored (`validate`); evaluation is total
 * and never throws.
 *
 * @internal
 */
import * as Result from "effect/Result"
import { jsonProblem } from "../../internal/schema.js"

/** A path from the arguments' root: object keys and array indices. */
export type Path = ReadonlyArray<string | number>

/** An argument predicate (see the module doc). */
export type Predicate =
  | { readonly path: Path; readonly equals: unknown }
  | { readonly path: Path; readonly oneOf: ReadonlyArray<unknown> }
  | { readonly path: Path; readonly prefix: string }
  | { readonly path: Path; readonly suffix: string }
  | { readonly all: ReadonlyArray<Predicate> }
  | { readonly any: ReadonlyArray<Predicate> }
  | { readonly not: Predicate }

/** How deeply predicates may nest (`all` / `any` / `not`). */
export const maxDepth = 16
/** The most nodes (comparisons and combinators) a predicate may have. */
export const maxNodes = 256
/** The longest path. */
export const maxPathLength = 32
/** The most values a `oneOf` may list. */
export const maxOneOf = 256

const comparisons = ["equals", "oneOf", "prefix", "suffix"] as const

const isPlainObject = (u: unknown): u is Record<string, unknown> => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

/** Why `u` is not a valid predicate (with where, `$` its root), or `undefined` when it is one. */
export const problem = (u: unknown): string | undefined => {
  const nodes = { count: 0 }
  return problemAt(u, "$", 0, nodes)
}

const problemAt = (u: unknown, at: string, depth: number, nodes: { count: number }): string | undefined => {
  if (depth >= maxDepth) return `${at}: the predicate nests deeper than ${maxDepth} levels`
  if (++nodes.count > maxNodes) return `${at}: the predicate has more than ${maxNodes} nodes`
  if (!isPlainObject(u)) return `${at}: a predicate is an object such as { "path": ["to"], "equals": "a@b.c" }`
  const keys = Object.keys(u)
  if (keys.includes("__proto__")) return `${at}: a "__proto__" key is not allowed`
  if (keys.length === 1 && (keys[0] === "all" || keys[0] === "any")) {
    const list = u[keys[0]]
    if (!Array.isArray(list) || list.length === 0) return `${at}.${keys[0]}: must be a non-empty array of predicates`
    for (let i = 0; i < list.length; i++) {
      const inner = problemAt(list[i], `${at}.${keys[0]}[${i}]`, depth + 1, nodes)
      if (inner !== undefined) return inner
    }
    return undefined
  }
  if (keys.length === 1 && keys[0] === "not") return problemAt(u.not, `${at}.not`, depth + 1, nodes)
  const operator = keys.filter((key) => key !== "path")
  if (!keys.includes("path") || operator.length !== 1) {
    return `${at}: expected "all", "any", "not", or "path" with one of ${comparisons.map((c) => `"${c}"`).join(", ")} (got ${
      keys.length === 0 ? "no keys" : keys.map((k) => JSON.stringify(k)).join(", ")
    })`
  }
  const pathProblem = checkPath(u.path, `${at}.path`)
  if (pathProblem !== undefined) return pathProblem
  const op = operator[0]!
  const value = u[op]
  switch (op) {
    case "equals": {
      const bad = jsonProblem(value)
      return bad === undefined ? undefined : `${at}.equals: ${bad}`
    }
    case "oneOf": {
      if (!Array.isArray(value) || value.length === 0 || value.length > maxOneOf) {
        return `${at}.oneOf: must be an array of 1 to ${maxOneOf} JSON values`
      }
      const bad = jsonProblem(value)
      return bad === undefined ? undefined : `${at}.oneOf: ${bad}`
    }
    case "prefix":
    case "suffix":
      return typeof value === "string" ? undefined : `${at}.${op}: must be a string`
    default:
      return `${at}: unknown operator ${JSON.stringify(op)} (known: ${comparisons.join(", ")}, all, any, not)`
  }
}

const checkPath = (path: unknown, at: string): string | undefined => {
  if (!Array.isArray(path)) return `${at}: must be an array of keys and indices`
  if (path.length > maxPathLength) return `${at}: longer than ${maxPathLength} steps`
  for (let i = 0; i < path.length; i++) {
    const step: unknown = path[i]
    if (typeof step === "string") {
      if (step === "__proto__") return `${at}[${i}]: "__proto__" is not allowed`
    } else if (!(typeof step === "number" && Number.isSafeInteger(step) && step >= 0)) {
      return `${at}[${i}]: must be a key (string) or an index (integer ≥ 0)`
    }
  }
  return undefined
}

/** `u` as a predicate, or why it is not one. */
export const validate = (u: unknown): Result.Result<Predicate, string> => {
  const found = problem(u)
  return found === undefined ? Result.succeed(u as Predicate) : Result.fail(found)
}

const missing: unique symbol = Symbol("missing")

/** The value at `path` in `root`, following own data only, or `missing`. */
const at = (root: unknown, path: Path): unknown => {
  let value: unknown = root
  for (const step of path) {
    if (typeof step === "number") {
      if (!Array.isArray(value) || step >= value.length) return missing
      value = value[step]
    } else {
      if (!isPlainObject(value) || !Object.hasOwn(value, step)) return missing
      value = value[step]
    }
  }
  return value
}

/** Deep equality of JSON values (object key order ignored), bounded by the values' own (checked) depth. */
export const jsonEquals = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((item, i) => jsonEquals(item, b[i]))
  }
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  const rb = b as Record<string, unknown>
  const ra = a as Record<string, unknown>
  return ka.every((key) => Object.hasOwn(rb, key) && jsonEquals(ra[key], rb[key]))
}

/**
 * Whether parsed `args` satisfy predicate `p`. Total: a value that is not a
 * valid predicate (a stored one written by hand) is satisfied by nothing.
 */
export const evaluate = (p: unknown, args: unknown): boolean => problem(p) === undefined && holds(p as Predicate, args)

const holds = (p: Predicate, args: unknown): boolean => {
  if ("all" in p) return p.all.every((q) => holds(q, args))
  if ("any" in p) return p.any.some((q) => holds(q, args))
  if ("not" in p) return !holds(p.not, args)
  const value = at(args, p.path)
  if (value === missing) return false
  if ("equals" in p) return jsonEquals(value, p.equals)
  if ("oneOf" in p) return p.oneOf.some((option) => jsonEquals(value, option))
  if ("prefix" in p) return typeof value === "string" && value.startsWith(p.prefix)
  return typeof value === "string" && value.endsWith(p.suffix)
}
