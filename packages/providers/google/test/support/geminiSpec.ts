/**
 * A checker of the rules of the Gemini API's v1beta `Schema` object, as its
 * published spec states them (the discovery document
 * `https://generativelanguage.googleapis.com/$discovery/rest?version=v1beta`,
 * `schemas.Schema`; the same fields as `@google/genai`'s `Schema` type):
 *
 * - `type` is required ("Required. Data type."): one of the `Type` values but
 *   `TYPE_UNSPECIFIED` ("Not specified, should not be used");
 * - the other fields are optional, and no other field exists: `format`,
 *   `title`, `description`, `pattern` (strings), `nullable` (boolean), `enum`,
 *   `required`, `propertyOrdering` (lists of strings), `minimum`, `maximum`
 *   (numbers), `minItems`, `maxItems`, `minLength`, `maxLength`,
 *   `minProperties`, `maxProperties` (int64: a whole number from 0, or its
 *   decimal string), `example`, `default` (any value), `items` (one Schema,
 *   not a list), `properties` (a map of names to Schemas), `anyOf` (a list of
 *   Schemas).
 *
 * `violations` lists every place a value breaks them (none: it is a valid
 * Schema); `requestViolations` does so for every schema of a
 * `generateContent` request body (each function's `parameters`,
 * `generationConfig.responseSchema`).
 */

/** The `Type` values a schema may have. */
const types: ReadonlySet<string> = new Set(["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"])

const strings = new Set(["format", "title", "description", "pattern"])
const stringLists = new Set(["enum", "required", "propertyOrdering"])
const numbers = new Set(["minimum", "maximum"])
const int64s = new Set(["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"])
const anyValue = new Set(["example", "default"])
const schemaFields = new Set(["type", "nullable", "items", "properties", "anyOf"])

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const isInt64 = (u: unknown): boolean =>
  (typeof u === "number" && Number.isSafeInteger(u) && u >= 0) || (typeof u === "string" && /^(0|[1-9][0-9]*)$/.test(u))

/** Every rule of the v1beta `Schema` object that `schema` (at `path`) breaks. */
export const violations = (schema: unknown, path = "schema"): Array<string> => {
  if (!isRecord(schema)) return [`${path}: a Schema must be an object, got ${JSON.stringify(schema)}`]
  const out: Array<string> = []
  if (!("type" in schema)) out.push(`${path}: no type (type is required)`)
  for (const [key, value] of Object.entries(schema)) {
    const at = `${path}.${key}`
    if (key === "type") {
      if (typeof value !== "string" || !types.has(value)) out.push(`${at}: ${JSON.stringify(value)} is not a Type`)
    } else if (key === "nullable") {
      if (typeof value !== "boolean") out.push(`${at}: not a boolean`)
    } else if (key === "items") {
      out.push(...violations(value, at))
    } else if (key === "properties") {
      if (!isRecord(value)) out.push(`${at}: not a map of Schemas`)
      else for (const [name, property] of Object.entries(value)) out.push(...violations(property, `${at}[${JSON.stringify(name)}]`))
    } else if (key === "anyOf") {
      if (!Array.isArray(value)) out.push(`${at}: not a list of Schemas`)
      else value.forEach((member, i) => out.push(...violations(member, `${at}[${i}]`)))
    } else if (strings.has(key)) {
      if (typeof value !== "string") out.push(`${at}: not a string`)
    } else if (stringLists.has(key)) {
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) out.push(`${at}: not a list of strings`)
    } else if (numbers.has(key)) {
      if (typeof value !== "number" || !Number.isFinite(value)) out.push(`${at}: not a number`)
    } else if (int64s.has(key)) {
      if (!isInt64(value)) out.push(`${at}: not an int64 from 0`)
    } else if (!anyValue.has(key) && !schemaFields.has(key)) {
      out.push(`${at}: not a field of Schema`)
    }
  }
  return out
}

/** Every rule broken by a schema of a `generateContent` / `streamGenerateContent` request body. */
export const requestViolations = (body: unknown): Array<string> => {
  if (!isRecord(body)) return []
  const out: Array<string> = []
  const tools = Array.isArray(body.tools) ? body.tools : []
  tools.forEach((tool, t) => {
    const declarations = isRecord(tool) && Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : []
    declarations.forEach((declaration, d) => {
      if (isRecord(declaration) && declaration.parameters !== undefined) {
        out.push(...violations(declaration.parameters, `tools[${t}].functionDeclarations[${d}].parameters`))
      }
    })
  })
  const config = isRecord(body.generationConfig) ? body.generationConfig : undefined
  if (config?.responseSchema !== undefined) out.push(...violations(config.responseSchema, "generationConfig.responseSchema"))
  return out
}
