/**
 * The response format of a structured turn: the schema's JSON Schema as
 * providers take it (an object at the top: every other root is wrapped in
 * `{ "value": … }`), strict when it can be, under a name providers accept,
 * and how the model's answer comes back to the schema's encoded form.
 *
 * @internal
 */
import type * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import type * as LanguageModel from "../model/LanguageModel.js"
import * as JsonSchema from "../internal/jsonSchema.js"
import * as StrictSchema from "../internal/strictSchema.js"

/** A response format and the way back from the model's answer. */
export interface Structured {
  readonly format: LanguageModel.ResponseFormat
  /** Why the format is sent without strict mode (empty when strict). */
  readonly notStrict: ReadonlyArray<string>
  /** Maps the model's parsed answer to the schema's encoded form (unwraps `value`, `null` → absent where added). */
  readonly fromWire: (json: unknown) => unknown
  /** Whether the schema's root is sent wrapped in `{ "value": … }` (it is not an object). */
  readonly wrapped: boolean
}

/** The property holding a non-object root. */
export const wrapKey = "value"

/** A name providers accept (1 to 64 letters, digits, `_` or `-`) made from the schema's identifier, or `output`. */
export const formatName = (identifier: unknown): string => {
  if (typeof identifier !== "string") return "output"
  const name = identifier.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64)
  return name === "" ? "output" : name
}

/**
 * The identifier 0.1 named a format after: a class's own identifier (`Schema.Class<A>("A")`) did not
 * count (0.1 read the name off the class's transformation, which had none), one annotated on it does.
 */
const identifierOf = (schema: Schema.Constraint): string | undefined => {
  const identifier = AST.resolveIdentifier(schema.ast)
  const own = (schema as { readonly identifier?: unknown }).identifier
  return AST.isDeclaration(schema.ast) && schema.ast.encoding !== undefined && own === identifier ? undefined : identifier
}

const isObjectRoot = (json: JsonSchema.JsonSchema): boolean =>
  json.type === "object" && json.anyOf === undefined && json.$ref === undefined

const wrap = (json: JsonSchema.JsonSchema): JsonSchema.JsonSchema => {
  const { $defs, ...root } = json
  return {
    type: "object",
    properties: { [wrapKey]: root },
    required: [wrapKey],
    additionalProperties: false,
    ...($defs === undefined ? {} : { $defs })
  }
}

const unwrap = (json: unknown): unknown =>
  typeof json === "object" && json !== null && !Array.isArray(json) && Object.hasOwn(json, wrapKey)
    ? (json as { readonly [key: string]: unknown })[wrapKey]
    : json

/** The response format for `schema`. */
export const make = (schema: Schema.Constraint): Structured => {
  const json = JsonSchema.make(schema.ast)
  const wrapped = !isObjectRoot(json)
  const root = wrapped ? wrap(json) : json
  const strict = StrictSchema.make(root)
  const isStrict = strict.reasons.length === 0
  const back = isStrict ? strict.fromWire : (u: unknown) => u
  return {
    format: {
      type: "json",
      name: formatName(identifierOf(schema)),
      schema: isStrict ? strict.schema : root,
      strict: isStrict
    },
    notStrict: strict.reasons,
    fromWire: wrapped ? (u) => unwrap(back(u)) : back,
    wrapped
  }
}
