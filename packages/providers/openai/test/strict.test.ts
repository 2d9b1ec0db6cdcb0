/**
 * Strict mode on the wire (issue 12, item 1): what the real `openai` SDK
 * sends to the loopback replay server for tools and structured output, and
 * how the answers come back. The replies are the recorded `text.json` and the
 * bodies of `fixtures/constructed/` (see the fixtures README for where each
 * comes from).
 */
import { Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as OpenAiChatCompletions from "../src/OpenAiChatCompletions.js"
import * as OpenAiResponses from "../src/OpenAiResponses.js"
import { clientLayer } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

type Body = { readonly [key: string]: any }

const Search = Tool.make("search", {
  description: "Search the catalogue.",
  parameters: { query: Schema.String, limit: Schema.optional(Schema.Number) },
  success: Schema.Array(Schema.String)
})
const Annotate = Tool.make("annotate", {
  description: "Attach free-form data.",
  parameters: { data: Schema.Unknown }
})

const chatLayer = (server: ReplayServer.ReplayServer, options: Partial<OpenAiChatCompletions.Options> = {}) =>
  OpenAiChatCompletions.layer({ model: "gpt-4o-2024-08-06", retry: false, ...options }).pipe(
    Layer.provide(clientLayer(server))
  )

const responsesLayer = (server: ReplayServer.ReplayServer, options: Partial<OpenAiResponses.Options> = {}) =>
  OpenAiResponses.layer({ model: "gpt-4o-mini", retry: false, ...options }).pipe(Layer.provide(clientLayer(server)))

const bodyOf = (server: ReplayServer.ReplayServer, index: number): Body => server.requests[index]!.body as Body

describe("strict mode: tools", () => {
  it.effect("an optional parameter goes strict as required + nullable; the model's null reaches the handler as absent (Chat Completions)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json(ReplayServer.fixture("constructed/chat-tool-call-optional-null.json")),
        ReplayServer.json(ReplayServer.fixture("chat-completions/text.json"))
      )
      const seen: Array<unknown> = []
      const kit = Toolkit.make(Search)
      const handlers = kit.toLayer({ search: (params) => Effect.sync(() => (seen.push(params), ["Cat Stevens"])) })
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(chatLayer(server), handlers)))
      const result = yield* chat.complete(Messages.fromUser("Find cats."))
      expect(result.outcome._tag).toBe("Complete")
      expect(seen).toEqual([{ query: "cats" }])
      const tool = bodyOf(server, 0).tools[0]
      expect(tool.function.strict).toBe(true)
      expect(tool.function.parameters).toEqual({
        type: "object",
        properties: { query: { type: "string" }, limit: { type: ["number", "null"] } },
        required: ["query", "limit"],
        additionalProperties: false
      })
      // The model sees its own arguments back as it sent them.
      expect(bodyOf(server, 1).messages[1].tool_calls[0].function.arguments).toBe("{\"query\": \"cats\", \"limit\": null}")
    }))

  it.effect("a tool that cannot be declared fails Chat.make with InvalidToolSchema; the server sees no request", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      const Either = Tool.make("either", {
        description: "",
        parameters: Schema.Union([Schema.Struct({ a: Schema.String }), Schema.Struct({ b: Schema.Number })])
      })
      const kit = Toolkit.make(Either)
      const error = yield* Effect.flip(
        Chat.make({ tools: kit }).pipe(
          Effect.provide(Layer.merge(chatLayer(server), kit.toLayer({ either: () => Effect.void })))
        )
      )
      expect(error._tag).toBe("InvalidToolSchema")
      expect(server.requests).toHaveLength(0)
    }))

  it.effect("a tool that cannot be strict goes without strict: no field on Chat Completions, strict: false on Responses", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")),
        ReplayServer.json(ReplayServer.fixture("responses/text.json"))
      )
      const kit = Toolkit.make(Search, Annotate)
      const handlers = kit.toLayer({ search: () => Effect.succeed([]), annotate: () => Effect.void })
      for (const model of [chatLayer(server), responsesLayer(server)]) {
        const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model, handlers)))
        yield* chat.complete(Messages.fromUser("Hi"))
      }
      const [chatSearch, chatAnnotate] = bodyOf(server, 0).tools
      expect(chatSearch.function.strict).toBe(true)
      expect(chatAnnotate.function).not.toHaveProperty("strict")
      const [respSearch, respAnnotate] = bodyOf(server, 1).tools
      expect(respSearch.strict).toBe(true)
      expect(respAnnotate.strict).toBe(false)
    }))

  it.effect("a Schema.Unknown parameter is sent as its title alone, without the $id Effect 3 wrote (both APIs)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json(ReplayServer.fixture("chat-completions/text.json")),
        ReplayServer.json(ReplayServer.fixture("responses/text.json"))
      )
      const kit = Toolkit.make(Annotate)
      const handlers = kit.toLayer({ annotate: () => Effect.void })
      for (const model of [chatLayer(server), responsesLayer(server)]) {
        const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model, handlers)))
        yield* chat.complete(Messages.fromUser("Hi"))
      }
      const expected = {
        type: "object",
        required: ["data"],
        properties: { data: { title: "unknown" } },
        additionalProperties: false
      }
      expect(bodyOf(server, 0).tools[0].function.parameters).toStrictEqual(expected)
      expect(bodyOf(server, 1).tools[0].parameters).toStrictEqual(expected)
      expect(JSON.stringify(server.requests.map((r) => r.body))).not.toContain("$id")
    }))

  it.effect("strict: false on the model layer: no strict field on Chat Completions, strict: false everywhere on Responses", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json(ReplayServer.fixture("constructed/chat-structured-wrapped.json")),
        ReplayServer.json(ReplayServer.fixture("constructed/responses-structured-wrapped.json"))
      )
      const kit = Toolkit.make(Search)
      const handlers = kit.toLayer({ search: () => Effect.succeed([]) })
      for (const model of [chatLayer(server, { strict: false }), responsesLayer(server, { strict: false })]) {
        const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model, handlers)))
        yield* chat.completeStructured(Messages.fromUser("Three French cities."), Schema.Array(Schema.String))
      }
      const chatBody = bodyOf(server, 0)
      expect(chatBody.tools[0].function).not.toHaveProperty("strict")
      expect(chatBody.response_format.json_schema).not.toHaveProperty("strict")
      const responsesBody = bodyOf(server, 1)
      expect(responsesBody.tools[0].strict).toBe(false)
      expect(responsesBody.text.format.strict).toBe(false)
    }))
})

describe("strict mode: structured output", () => {
  const Cities = Schema.Array(Schema.String).annotate({ identifier: "French cities!" })

  it.effect("a non-object root is sent wrapped in { value }, strict, under a fitting name, and unwrapped (both APIs)", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.json(ReplayServer.fixture("constructed/chat-structured-wrapped.json")),
        ReplayServer.json(ReplayServer.fixture("constructed/responses-structured-wrapped.json"))
      )
      const values: Array<unknown> = []
      for (const model of [chatLayer(server), responsesLayer(server)]) {
        const chat = yield* Chat.make().pipe(Effect.provide(model))
        const result = yield* chat.completeStructured(Messages.fromUser("Three French cities."), Cities)
        if (result.outcome._tag === "Complete") values.push(result.outcome.value)
      }
      expect(values).toEqual([["Paris", "Lyon", "Marseille"], ["Paris", "Lyon", "Marseille"]])
      const wrapped = {
        type: "object",
        properties: { value: { type: "array", items: { type: "string" } } },
        required: ["value"],
        additionalProperties: false
      }
      expect(bodyOf(server, 0).response_format).toEqual({
        type: "json_schema",
        json_schema: { name: "French_cities_", schema: wrapped, strict: true }
      })
      expect(bodyOf(server, 1).text.format).toEqual({ type: "json_schema", name: "French_cities_", schema: wrapped, strict: true })
    }))
})
