/**
 * The JSON Schema providers are sent for tool parameters and structured
 * output: always an object schema at the top (providers reject a top-level
 * `$ref`, which Effect emits for schemas with an identifier, and the
 * `anyOf: [object, array]` it emits for an empty struct).
 *
 * @internal
 */
import * as JSONSchema from "effect/JSONSchema"
import * as AST from "effect/SchemaAST"

/** A JSON Schema object, without `$schema`. */
export type JsonSchema = { readonly [key: string]: unknown }

/** The JSON Schema of a schema's encoded side, with its top-level definition inlined. */
export const make = (ast: AST.AST): JsonSchema => {
  const encoded = AST.encodedAST(ast)
  if (AST.isTypeLiteral(encoded) && encoded.propertySignatures.length === 0 && encoded.indexSignatures.length === 0) {
    return { type: "object", properties: {}, required: [], additionalProperties: false }
  }
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const root = JSONSchema.fromAST(ast, { definitions, topLevelReferenceStrategy: "skip" }) as unknown as JsonSchema
  return Object.keys(definitions).length === 0 ? root : { ...root, $defs: definitions }
}
