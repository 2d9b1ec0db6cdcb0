/**
 * The Effect Schema constructs of the strict-mode tests, shared by
 * `Tool.strict.test.ts` (each one goes through `Tool.make`, and what the
 * model sends for it must decode) and `JsonSchema.compat.test.ts` (the JSON
 * Schema sent for each one must be what chat-ts 0.1 sent, recorded in
 * `test/fixtures/v0.1/json-schemas.json`).
 *
 * Each construct names the entry of that file that 0.1 recorded for it, by a
 * predicate on the entry's `input` (the JSON Schema 0.1 built before strict
 * mode): the tools of these tests all share the name `t` and the description
 * "A tool.", so the name alone does not tell them apart.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Tool from "../../src/tools/Tool.js"

/** A JSON Schema node as 0.1 recorded it. */
export type Node = { readonly [key: string]: unknown }

/** Picks the 0.1 fixture entry of a construct by the JSON Schema 0.1 made of its field `x` (and the whole input). */
export type FixturePick = (x: Node, input: Node) => boolean

export enum Color {
  Red = "red",
  Blue = "blue"
}

export interface Category {
  readonly name: string
  readonly note?: string | undefined
  readonly children: ReadonlyArray<Category>
}

export const Category: Schema.Codec<Category> = Schema.Struct({
  name: Schema.String,
  note: Schema.optional(Schema.String),
  children: Schema.Array(Schema.suspend((): Schema.Codec<Category> => Category))
}).annotate({ identifier: "Category" })

export class Person extends Schema.Class<Person>("Person")({ name: Schema.String, age: Schema.optional(Schema.Number) }) {}

/** A construct: its field schema, what the model sends for it under strict mode, and what that decodes to. */
export interface Construct {
  readonly field: Schema.Constraint
  readonly wire: unknown
  readonly decoded?: unknown
  /** The entry 0.1 recorded for `Tool.make("t", { description: "A tool.", parameters: { x: field } })`. */
  readonly fixture: FixturePick
}

const isString = (x: Node) => x.type === "string"
const textOf = (u: unknown): string => JSON.stringify(u) ?? ""
const notRequired = (input: Node) => (input.required as ReadonlyArray<string>).length === 0
const onlyKeys = (x: Node, ...keys: ReadonlyArray<string>) =>
  Object.keys(x).length === keys.length && keys.every((key) => key in x)

export const strictConstructs: Record<string, Construct> = {
  "optional (null sent)": {
    field: Schema.optional(Schema.String),
    wire: null,
    decoded: undefined,
    fixture: (x, input) => notRequired(input) && onlyKeys(x, "type") && isString(x)
  },
  "optional (value sent)": {
    field: Schema.optional(Schema.String),
    wire: "x",
    decoded: "x",
    fixture: (x, input) => notRequired(input) && onlyKeys(x, "type") && isString(x)
  },
  "optional with a default": {
    field: Schema.Number.pipe(Schema.withDecodingDefault(Effect.succeed(1))),
    wire: null,
    decoded: 1,
    fixture: (x, input) => notRequired(input) && onlyKeys(x, "type") && x.type === "number"
  },
  nullable: {
    field: Schema.NullOr(Schema.String),
    wire: null,
    decoded: null,
    fixture: (x, input) => !notRequired(input) && Array.isArray(x.anyOf) && JSON.stringify(x.anyOf).includes("null")
  },
  "optional and nullable (null is kept)": {
    field: Schema.optional(Schema.NullOr(Schema.String)),
    wire: null,
    decoded: null,
    fixture: (x, input) => notRequired(input) && Array.isArray(x.anyOf) && JSON.stringify(x.anyOf).includes("null")
  },
  union: {
    field: Schema.Union([Schema.String, Schema.Number]),
    wire: 3,
    decoded: 3,
    fixture: (x) => JSON.stringify(x) === JSON.stringify({ anyOf: [{ type: "string" }, { type: "number" }] })
  },
  literals: {
    field: Schema.Literals(["a", "b"]),
    wire: "b",
    decoded: "b",
    fixture: (x, input) => !notRequired(input) && JSON.stringify(x.enum) === "[\"a\",\"b\"]"
  },
  "optional literal": {
    field: Schema.optional(Schema.Literals(["a", "b"])),
    wire: null,
    decoded: undefined,
    fixture: (x, input) => notRequired(input) && JSON.stringify(x.enum) === "[\"a\",\"b\"]"
  },
  enums: {
    field: Schema.Enum(Color),
    wire: "blue",
    decoded: Color.Blue,
    fixture: (x) => x.$comment === "/schemas/enums"
  },
  "tagged union with optional fields": {
    field: Schema.Union([
      Schema.TaggedStruct("Circle", { radius: Schema.Number, label: Schema.optional(Schema.String) }),
      Schema.TaggedStruct("Square", { side: Schema.Number, label: Schema.optional(Schema.String) })
    ]),
    wire: { _tag: "Square", side: 2, label: null },
    decoded: { _tag: "Square", side: 2 },
    fixture: (x) => JSON.stringify(x).includes("Circle")
  },
  refinements: {
    field: Schema.String.check(Schema.isMinLength(2), Schema.isMaxLength(5)),
    wire: "abc",
    decoded: "abc",
    fixture: (x) => x.maxLength === 5 && !("default" in x)
  },
  "integer range": {
    field: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 9 })),
    wire: 5,
    decoded: 5,
    fixture: (x) => x.type === "integer"
  },
  pattern: {
    field: Schema.String.check(Schema.isPattern(/^[a-z]+$/)),
    wire: "abc",
    decoded: "abc",
    fixture: (x) => x.pattern === "^[a-z]+$"
  },
  uuid: {
    field: Schema.String.check(Schema.isUUID()),
    wire: "123e4567-e89b-12d3-a456-426614174000",
    decoded: "123e4567-e89b-12d3-a456-426614174000",
    fixture: (x) => x.format === "uuid"
  },
  brand: {
    field: Schema.String.pipe(Schema.brand("UserId")),
    wire: "u1",
    decoded: "u1",
    fixture: (x, input) => !notRequired(input) && onlyKeys(x, "type") && isString(x)
  },
  // 0.1's `Schema.Date` was the ISO string decoded into a Date: Effect 4 calls that `DateFromString`.
  date: {
    field: Schema.DateFromString,
    wire: "2025-03-01T00:00:00.000Z",
    decoded: new Date("2025-03-01T00:00:00.000Z"),
    fixture: (x) => x.description === "a string to be decoded into a Date"
  },
  "number from string": {
    field: Schema.NumberFromString,
    wire: "7",
    decoded: 7,
    fixture: (x) => x.description === "a string to be decoded into a number"
  },
  "non-empty array": {
    field: Schema.NonEmptyArray(Schema.String),
    wire: ["a"],
    decoded: ["a"],
    fixture: (x) => x.type === "array" && x.minItems === 1 && !Array.isArray(x.items)
  },
  recursion: {
    field: Category,
    wire: { name: "a", note: null, children: [{ name: "b", note: "bee", children: [] }] },
    decoded: { name: "a", children: [{ name: "b", note: "bee", children: [] }] },
    fixture: (x) => JSON.stringify(x).includes("#/$defs/Category")
  },
  class: {
    field: Person,
    wire: { name: "Ada", age: null },
    decoded: new Person({ name: "Ada" }),
    fixture: (x) => x.type === "object" && JSON.stringify(x.required) === "[\"name\"]"
  },
  "array of optional fields": {
    field: Schema.Array(Schema.Struct({ k: Schema.optional(Schema.String) })),
    wire: [{ k: null }, { k: "v" }],
    decoded: [{}, { k: "v" }],
    fixture: (x) => x.type === "array" && (x.items as Node | undefined)?.type === "object"
  },
  "default annotation": {
    field: Schema.String.annotate({ default: "fr" }),
    wire: "en",
    decoded: "en",
    fixture: (x) => x.default === "fr"
  }
}

/** A construct strict mode cannot take: the tool is sent non-strict. */
export interface LooseConstruct {
  readonly field: Schema.Constraint
  readonly fixture: FixturePick
}

export const looseConstructs: Record<string, LooseConstruct> = {
  unknown: { field: Schema.Unknown, fixture: (x) => x.$id === "/schemas/unknown" },
  any: { field: Schema.Any, fixture: (x) => x.$id === "/schemas/any" },
  record: { field: Schema.Record(Schema.String, Schema.Number), fixture: (x) => typeof x.additionalProperties === "object" },
  tuple: { field: Schema.Tuple([Schema.String, Schema.Number]), fixture: (x) => x.additionalItems === false },
  "tuple with a rest": {
    field: Schema.TupleWithRest(Schema.Tuple([Schema.String]), [Schema.Number]),
    fixture: (x) => typeof x.additionalItems === "object"
  },
  object: { field: Schema.ObjectKeyword, fixture: (x) => x.$id === "/schemas/object" }
}

/** The tool of a construct: `t`, "A tool.", parameters `{ x: field }`. */
export const toolOf = (field: Schema.Constraint, strict?: boolean) =>
  Tool.make("t", { description: "A tool.", parameters: { x: field }, ...(strict === undefined ? {} : { strict }) })

/** A string whose strict-mode declaration keeps its checks and its default in the description. */
export const describedString = Schema.String.check(Schema.isMinLength(2), Schema.isMaxLength(5)).annotate({ default: "ab" })

/** A string with a format strict mode does not support. */
export const uriString = Schema.String.annotate({ format: "uri" })

/** A struct nested 11 levels deep (past OpenAI's limit of 10). */
export const deepStruct = (): Schema.Constraint => {
  let deep: Schema.Constraint = Schema.Struct({ leaf: Schema.String })
  for (let i = 0; i < 10; i++) deep = Schema.Struct({ next: deep })
  return deep
}

/** A literal with more enum values than OpenAI takes (1000). */
export const bigEnum = Schema.Literals(Array.from({ length: 1001 }, (_, i) => `v${i}`))

/** Parameters that are a union of objects, not one object. */
export const unionOfStructs = Schema.Union([Schema.Struct({ a: Schema.String }), Schema.Struct({ b: Schema.String })])

/** Every tool the strict-mode tests declare, beyond the constructs, with the 0.1 entry of each. */
export const otherTools: ReadonlyArray<{
  readonly name: string
  readonly tool: Tool.Any
  readonly fixture: (entry: Node) => boolean
}> = [
  {
    name: "an optional and a nullable property",
    tool: Tool.make("t", { description: "", parameters: { a: Schema.optional(Schema.String), b: Schema.NullOr(Schema.String) } }),
    fixture: (entry) => ((entry.input as Node | undefined)?.properties as Node | undefined)?.b !== undefined
  },
  {
    name: "an optional property (null mapped back)",
    tool: Tool.make("t", { description: "", parameters: { a: Schema.optional(Schema.String) } }),
    fixture: (entry) => JSON.stringify((entry.input as Node | undefined)?.required) === "[]"
  },
  {
    name: "a union at the top",
    tool: Tool.make("t", { description: "", parameters: unionOfStructs }),
    fixture: (entry) => Array.isArray((entry.input as Node | undefined)?.anyOf)
  },
  {
    name: "an array at the top",
    tool: Tool.make("t", { description: "", parameters: Schema.Array(Schema.String) }),
    fixture: (entry) => (entry.input as Node | undefined)?.type === "array"
  },
  {
    name: "a schema with no JSON Schema",
    tool: Tool.make("t", { description: "", parameters: { at: Schema.Date } }),
    fixture: (entry) => entry.input === undefined
  },
  { name: "a bad name", tool: Tool.make("get weather", { description: "", parameters: {} }), fixture: () => true },
  { name: "a long name", tool: Tool.make("x".repeat(65), { description: "", parameters: {} }), fixture: () => true },
  {
    name: "strict: true on a schema that cannot be",
    tool: toolOf(Schema.Unknown, true),
    fixture: (entry) => entry.strictOption === true
  },
  {
    name: "strict: false",
    tool: toolOf(Schema.optional(Schema.String), false),
    fixture: (entry) => entry.strictOption === false
  },
  {
    name: "checks and a default kept in the description",
    tool: toolOf(describedString),
    fixture: (entry) => (entry.input as { properties: { x: Node } }).properties.x.default === "ab"
  },
  {
    name: "an unsupported format",
    tool: toolOf(uriString),
    fixture: (entry) => (entry.input as { properties: { x: Node } }).properties.x.format === "uri"
  },
  {
    name: "nested too deep",
    tool: toolOf(deepStruct()),
    fixture: (entry) => textOf(entry.input).includes("\"next\"")
  },
  {
    name: "too many enum values",
    tool: toolOf(bigEnum),
    fixture: (entry) => textOf(entry.input).includes("\"v1000\"")
  },
  {
    name: "Chat: a search tool with an optional limit",
    tool: Tool.make("search", {
      description: "Search.",
      parameters: { query: Schema.String, limit: Schema.optional(Schema.Number) },
      success: Schema.Unknown
    }),
    fixture: () => true
  },
  {
    name: "Chat: a tool that cannot be declared",
    tool: Tool.make("bad", { description: "", parameters: unionOfStructs }),
    fixture: () => true
  },
  {
    name: "Chat: a loose tool",
    tool: Tool.make("loose", { description: "", parameters: { data: Schema.Unknown } }),
    fixture: () => true
  },
  {
    name: "Chat: a loose tool with strict: false",
    tool: Tool.make("quiet", { description: "", parameters: { data: Schema.Unknown }, strict: false }),
    fixture: () => true
  }
]

/** A structured-output case of the strict-mode tests: the schema, the model's answer, what it decodes to. */
export interface StructuredCase {
  readonly name: string
  readonly schema: Schema.Codec<unknown, unknown>
  readonly answer: string
  readonly value: unknown
  readonly wrapped: boolean
}

export const structuredCases: ReadonlyArray<StructuredCase> = [
  { name: "an array at the top", schema: Schema.Array(Schema.String), answer: "{\"value\":[\"a\",\"b\"]}", value: ["a", "b"], wrapped: true },
  { name: "a string at the top", schema: Schema.String, answer: "{\"value\":\"hi\"}", value: "hi", wrapped: true },
  {
    name: "a union at the top",
    schema: Schema.Union([Schema.Struct({ a: Schema.String }), Schema.Struct({ b: Schema.optional(Schema.Number) })]),
    answer: "{\"value\":{\"b\":null}}",
    value: {},
    wrapped: true
  },
  {
    name: "a class with an optional field",
    schema: Person,
    answer: "{\"name\":\"Ada\",\"age\":null}",
    value: new Person({ name: "Ada" }),
    wrapped: false
  },
  {
    name: "recursion",
    schema: Schema.Struct({ root: Category }),
    answer: "{\"root\":{\"name\":\"r\",\"note\":null,\"children\":[]}}",
    value: { root: { name: "r", children: [] } },
    wrapped: false
  }
]

/** A structured output whose identifier is no valid format name, and whose record keeps it from strict mode. */
export const oddlyNamed = Schema.Struct({ data: Schema.Record(Schema.String, Schema.Number) }).annotate({
  identifier: "Weird name<with>/chars"
})
