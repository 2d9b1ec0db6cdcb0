/**
 * Strict mode (OpenAI's Structured Outputs subset of JSON Schema) for tool
 * parameters and structured output: a broad set of Effect Schema constructs
 * goes through `Tool.make` and `completeStructured`, and every schema sent
 * with `strict: true` is checked against the subset's rules by `violations`
 * below, written apart from the code under test. A value the model may send
 * for the strict schema (`null` for an optional property) must decode with
 * the original schema.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Result, Schema } from "effect"
import { Chat, ChatError, Messages, Tool, Toolkit } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import * as StrictSchema from "../src/internal/strictSchema.js"
import { complete } from "./support/Chat.helpers.js"
import {
  bigEnum,
  deepStruct,
  describedString,
  looseConstructs,
  type Node,
  oddlyNamed,
  strictConstructs,
  structuredCases,
  toolOf,
  unionOfStructs,
  uriString
} from "./support/strictConstructs.js"

// ---------------------------------------------------------------------------
// The rules, as OpenAI's Structured Outputs guide states them
// ---------------------------------------------------------------------------

const keywords = new Set([
  "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const", "$ref", "$defs",
  "description", "title", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
  "multipleOf", "minItems", "maxItems"
])
const formats = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"])

/** Every way a schema breaks the strict rules (empty when it keeps them all). */
const violations = (schema: Node): ReadonlyArray<string> => {
  const out: Array<string> = []
  if (schema.type !== "object" || "anyOf" in schema) out.push("root: not an object")
  const visit = (node: unknown, path: string): void => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return void out.push(`${path}: not a schema`)
    const n = node as Node
    for (const key of Object.keys(n)) if (!keywords.has(key)) out.push(`${path}: keyword ${key}`)
    if (!["type", "anyOf", "enum", "const", "$ref"].some((key) => key in n)) out.push(`${path}: no type`)
    const types = Array.isArray(n.type) ? n.type : [n.type]
    if (types.includes("object")) {
      const properties = (n.properties ?? {}) as Node
      if (n.additionalProperties !== false) out.push(`${path}: open object`)
      const required = new Set(n.required as ReadonlyArray<string>)
      if (Object.keys(properties).some((key) => !required.has(key))) out.push(`${path}: a property not required`)
      for (const [key, child] of Object.entries(properties)) visit(child, `${path}.${key}`)
    }
    if (Array.isArray(n.items)) out.push(`${path}: tuple`)
    else if (n.items !== undefined) visit(n.items, `${path}[]`)
    if (n.format !== undefined && !formats.has(n.format as string)) out.push(`${path}: format ${String(n.format)}`)
    if (Array.isArray(n.anyOf)) n.anyOf.forEach((branch, i) => visit(branch, `${path}|${i}`))
    for (const [name, def] of Object.entries((n.$defs ?? {}) as Node)) visit(def, `$defs.${name}`)
  }
  visit(schema, "root")
  return out
}

const wireOf = (tool: Tool.Any): Tool.Wire => Result.getOrThrow(Tool.wire(tool))

const decode = (tool: Tool.Any, wire: unknown) =>
  Schema.decodeUnknownResult(tool.parameters as Schema.Codec<unknown, unknown>)(Tool.fromWire(tool, wire))

describe("Tool: strict mode for every common construct", () => {
  for (const [name, construct] of Object.entries(strictConstructs)) {
    it(`${name}: strict, within the rules, and the model's value decodes`, () => {
      const tool = toolOf(construct.field)
      const wire = wireOf(tool)
      expect(wire.declaration.strict).toBe(true)
      expect(wire.notStrict).toEqual([])
      expect(violations(wire.declaration.parameters)).toEqual([])
      const decoded = decode(tool, { x: construct.wire })
      expect(Result.isSuccess(decoded)).toBe(true)
      const value = Result.getOrThrow(decoded) as { readonly x?: unknown }
      if (construct.decoded === undefined) expect("x" in value).toBe(false)
      else expect(value.x).toEqual(construct.decoded)
    })
  }

  for (const [name, { field }] of Object.entries(looseConstructs)) {
    it(`${name}: sent non-strict, with the reason, and the schema as Effect writes it`, () => {
      const wire = wireOf(toolOf(field))
      expect(wire.declaration.strict).toBe(false)
      expect(wire.notStrict.length).toBeGreaterThan(0)
      expect(wire.notStrict.join("\n")).toContain("root.x")
      expect(violations(wire.declaration.parameters).length).toBeGreaterThan(0)
    })
  }

  it("keeps in the description what the strict subset cannot carry", () => {
    const params = wireOf(toolOf(describedString))
      .declaration.parameters as { readonly properties: { readonly x: Node } }
    expect(params.properties.x).not.toHaveProperty("minLength")
    expect(params.properties.x).not.toHaveProperty("default")
    expect(params.properties.x.description).toContain("minLength: 2")
    expect(params.properties.x.description).toContain("maxLength: 5")
    expect(params.properties.x.description).toContain("default: \"ab\"")
    const format = wireOf(toolOf(uriString)).declaration
    expect(violations(format.parameters)).toEqual([])
    expect(JSON.stringify(format.parameters)).toContain("format: \\\"uri\\\"")
  })

  it("sends an optional property as required and nullable, and leaves a nullable one alone", () => {
    const params = wireOf(Tool.make("t", {
      description: "",
      parameters: { a: Schema.optional(Schema.String), b: Schema.NullOr(Schema.String) }
    })).declaration.parameters
    expect(params).toEqual({
      type: "object",
      properties: { a: { type: ["string", "null"] }, b: { anyOf: [{ type: "string" }, { type: "null" }] } },
      required: ["a", "b"],
      additionalProperties: false
    })
  })

  it("strict: false sends the schema as Effect writes it; strict: true on a schema that cannot be is an error", () => {
    const off = wireOf(toolOf(Schema.optional(Schema.String), false))
    expect(off.declaration.strict).toBe(false)
    expect(off.declaration.parameters).toMatchObject({ required: [] })
    expect(off.notStrict).toEqual([])
    const forced = Tool.wire(toolOf(Schema.Unknown, true))
    expect(Result.isFailure(forced)).toBe(true)
    if (Result.isFailure(forced)) {
      expect(forced.failure).toBeInstanceOf(ChatError.InvalidToolSchema)
      expect(forced.failure.message).toContain("root.x")
    }
  })

  it("refuses parameters that are not an object at the top, a schema with no JSON Schema, and a bad name", () => {
    const union = Tool.make("t", { description: "", parameters: unionOfStructs })
    const array = Tool.make("t", { description: "", parameters: Schema.Array(Schema.String) })
    // A Date itself (not the ISO string of one: 0.1's `Schema.DateFromSelf`).
    const noJson = Tool.make("t", { description: "", parameters: { at: Schema.Date } })
    const badName = Tool.make("get weather", { description: "", parameters: {} })
    const long = Tool.make("x".repeat(65), { description: "", parameters: {} })
    for (const [tool, text] of [[union, "object at the top"], [array, "object at the top"], [noJson, "JSON Schema"], [
      badName,
      "name"
    ], [long, "name"]] as const) {
      const result = Tool.wire(tool)
      expect(Result.isFailure(result) && result.failure.detail.includes(text)).toBe(true)
    }
  })

  it("isStrictCompatible checks the whole subset, not only closed objects", () => {
    const closed = { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false }
    expect(Tool.isStrictCompatible(closed)).toBe(true)
    expect(Tool.isStrictCompatible({ ...closed, properties: { a: {} } })).toBe(false)
    expect(Tool.isStrictCompatible({ ...closed, properties: { a: { type: "string", default: "x" } } })).toBe(false)
    expect(Tool.isStrictCompatible({ ...closed, properties: { a: { type: "array", items: [{ type: "string" }] } } }))
      .toBe(false)
    expect(Tool.isStrictCompatible({ anyOf: [closed, closed] })).toBe(false)
    expect(Tool.isStrictCompatible({ type: "array", items: { type: "string" } })).toBe(false)
    expect(Tool.isStrictCompatible({ ...closed, properties: { a: { type: "string", allOf: [] } } })).toBe(false)
  })

  it("refuses schemas past OpenAI's limits (nesting, enum size)", () => {
    expect(wireOf(toolOf(deepStruct())).notStrict.join()).toContain("nested deeper")
    expect(wireOf(toolOf(bigEnum)).notStrict.join()).toContain("enum values")
  })

  it("maps null back only where it added it, keeps __proto__ an own key, and survives a reference loop", () => {
    const tool = Tool.make("t", { description: "", parameters: { a: Schema.optional(Schema.String) } })
    const parsed = JSON.parse("{\"a\":null,\"__proto__\":{\"polluted\":true}}") as unknown
    const back = Tool.fromWire(tool, parsed) as object
    expect(Object.hasOwn(back, "a")).toBe(false)
    expect(Object.hasOwn(back, "__proto__")).toBe(true)
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
    expect(Tool.fromWire(tool, "not an object")).toBe("not an object")
    expect(Tool.fromWire(tool, [null])).toEqual([null])
    const loop = StrictSchema.make({
      type: "object",
      properties: { x: { $ref: "#/$defs/A" } },
      required: ["x"],
      additionalProperties: false,
      $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } }
    })
    expect(loop.fromWire({ x: { y: null } })).toEqual({ x: { y: null } })
  })
})

// ---------------------------------------------------------------------------
// Through the Chat service
// ---------------------------------------------------------------------------

const capture = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ message }) => {
    lines.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
  return { lines, layer: Logger.layer([logger]) }
}

describe("Chat: strict schemas at Chat.make and in completeStructured", () => {
  const Search = Tool.make("search", {
    description: "Search.",
    parameters: { query: Schema.String, limit: Schema.optional(Schema.Number) },
    success: Schema.Unknown
  })

  it.effect("the model's null for an optional parameter reaches the handler as an absent key", () =>
    Effect.gen(function*() {
      const params: Array<unknown> = []
      const kit = Toolkit.make(Search)
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "c1", name: "search", arguments: { query: "cats", limit: null } }]),
        MockLanguageModel.text("Found.")
      ])
      const handlers = kit.toLayer({ search: (p) => Effect.sync(() => params.push(p)) })
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      expect(chat.tools[0]).toMatchObject({ strict: true, parameters: { required: ["query", "limit"] } })
      complete(yield* chat.complete(Messages.fromUser("Find cats.")))
      expect(params).toEqual([{ query: "cats" }])
    }))

  it.effect("a tool that cannot be declared fails Chat.make with InvalidToolSchema; nothing reaches the model", () =>
    Effect.gen(function*() {
      const Bad = Tool.make("bad", { description: "", parameters: unionOfStructs })
      const kit = Toolkit.make(Bad)
      const model = MockLanguageModel.make([MockLanguageModel.text("never")])
      const error = yield* Effect.flip(
        Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, kit.toLayer({ bad: () => Effect.void }))))
      )
      expect(error._tag).toBe("InvalidToolSchema")
      expect(error.message).toContain("'bad'")
      expect(model.requests).toHaveLength(0)
    }))

  it.effect("a tool sent non-strict is a warning naming the reason; strict: false silences it", () =>
    Effect.gen(function*() {
      const Loose = Tool.make("loose", { description: "", parameters: { data: Schema.Unknown } })
      const Quiet = Tool.make("quiet", { description: "", parameters: { data: Schema.Unknown }, strict: false })
      const kit = Toolkit.make(Loose, Quiet)
      const logs = capture()
      const model = MockLanguageModel.make([])
      const chat = yield* Chat.make({ tools: kit }).pipe(
        Effect.provide(Layer.merge(model.layer, kit.toLayer({ loose: () => Effect.void, quiet: () => Effect.void }))),
        Effect.provide(logs.layer)
      )
      expect(chat.tools.map((tool) => tool.strict)).toEqual([false, false])
      expect(logs.lines).toHaveLength(1)
      expect(logs.lines[0]).toContain("Tool 'loose' is sent without strict mode")
      expect(logs.lines[0]).toContain("root.data")
    }))

  for (const c of structuredCases) {
    it.effect(`completeStructured with ${c.name}: a strict object format, and the answer decodes`, () =>
      Effect.gen(function*() {
        const model = MockLanguageModel.make([MockLanguageModel.text(c.answer)])
        const chat = yield* Chat.make().pipe(Effect.provide(model.layer))
        const done = complete(yield* chat.completeStructured(Messages.fromUser("Answer."), c.schema))
        expect(done.value).toEqual(c.value)
        const format = model.requests[0]!.options.responseFormat!
        expect(format.strict).toBe(true)
        expect(violations(format.schema)).toEqual([])
        expect(format.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
        if (c.wrapped) expect(format.schema.required).toEqual(["value"])
        else expect(format.schema.properties).not.toHaveProperty("value")
      }))
  }

  it.effect("completeStructured: a name outside the allowed pattern is made fit; a loose schema warns and goes non-strict", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("{\"data\":{\"x\":1}}")])
      const logs = capture()
      const chat = yield* Chat.make().pipe(Effect.provide(model.layer))
      const done = complete(yield* chat.completeStructured(Messages.fromUser("Answer."), oddlyNamed).pipe(Effect.provide(logs.layer)))
      expect(done.value).toEqual({ data: { x: 1 } })
      const format = model.requests[0]!.options.responseFormat!
      expect(format.name).toBe("Weird_name_with__chars")
      expect(format.strict).toBe(false)
      expect(logs.lines.join("\n")).toContain("without strict mode")
    }))
})
