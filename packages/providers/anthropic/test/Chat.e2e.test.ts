/**
 * End to end: the core `Chat` runs the seed's human-in-the-loop flow on the
 * Anthropic layer against the replay server (the real SDK over HTTP). The
 * model proposes two `tool_use` calls (recorded: the SDK's ToolRunner
 * fixtures), the turn pauses for approval, a person approves one with edited
 * arguments and rejects the other with a reason, the turn resumes and
 * completes. The `tool_result` blocks sent on the wire are checked exactly.
 */
import { Action, Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as AnthropicLanguageModel from "../src/AnthropicLanguageModel.js"
import { clientLayer } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const TestTool = Tool.make("test_tool", {
  description: "A test tool",
  parameters: { count: Schema.Number },
  success: Schema.String
})

/** Every call waits for a person. */
const toolkit = Toolkit.make(TestTool).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))

const handlers = (ran: Array<unknown>) =>
  toolkit.toLayer({ test_tool: (params) => Effect.sync(() => (ran.push(params), `Called with ${params.count}`)) })

const firstId = "toolu_01L8GVQapA1HmggQcrwboukH"
const secondId = "toolu_01J5Fvzxu7DP1Uh59c1kr5JD"
const ask = "Use the test_tool with count 1, then use it again with count 2"

/** Runs a streamed turn and returns its messages and how it ended, from the last event. */
const streamed = (chat: Chat.Service, messages: Messages.Messages) =>
  Effect.gen(function*() {
    const events = Array.from(yield* Stream.runCollect(chat.stream(messages)))
    const last = events[events.length - 1]
    if (last === undefined) throw new Error("no events")
    if (last._tag === "Paused") return { messages: last.messages, outcome: { _tag: "Paused" as const, reason: last.reason } }
    if (last._tag === "Completed") return { messages: last.messages, outcome: { _tag: "Complete" as const } }
    throw new Error(`unexpected last event ${last._tag}`)
  })

const run = (mode: "complete" | "stream") =>
  Effect.gen(function*() {
    const server = yield* ReplayServer.make
    server.enqueue(
      mode === "complete"
        ? ReplayServer.json(ReplayServer.fixture("messages/tool-use-parallel.json"))
        : ReplayServer.sse(ReplayServer.fixture("constructed/stream-tool-use-parallel.sse")),
      mode === "complete"
        ? ReplayServer.json(ReplayServer.fixture("messages/text-after-parallel.json"))
        : ReplayServer.sse(ReplayServer.fixture("stream/text.sse"))
    )
    const ran: Array<unknown> = []
    const layer = Layer.merge(
      AnthropicLanguageModel.layer({ model: "claude-opus-4-8", retry: false }).pipe(Layer.provide(clientLayer(server))),
      handlers(ran)
    )
    const chat = yield* Chat.make({ tools: toolkit, system: "Answer briefly." }).pipe(Effect.provide(layer))
    const turn = (messages: Messages.Messages) => (mode === "complete" ? chat.complete(messages) : streamed(chat, messages))
    const resume = (messages: Messages.Messages) => (mode === "complete" ? chat.resume(messages) : streamed(chat, messages))

    const first = yield* turn(Messages.fromUser(ask))
    expect(first.outcome).toMatchObject({ _tag: "Paused", reason: { _tag: "AwaitingApproval" } })
    expect(ran).toEqual([])
    expect(server.requests).toHaveLength(1)
    expect(Messages.pendingTools(first.messages).map((call) => [call.id, call.arguments])).toEqual([
      [firstId, "{\"count\":1}"],
      [secondId, "{\"count\":2}"]
    ])

    const firstBody = server.requests[0]!.body as Record<string, unknown>
    expect(server.requests[0]!.path).toBe("/v1/messages")
    expect(firstBody).toMatchObject({
      model: "claude-opus-4-8",
      max_tokens: 4096,
      system: [{ type: "text", text: "Answer briefly." }],
      messages: [{ role: "user", content: [{ type: "text", text: ask }] }],
      tools: [{ name: "test_tool", description: "A test tool", input_schema: chat.tools[0]!.parameters }]
    })
    expect(firstBody["tool_choice"]).toBeUndefined()

    const approved = yield* Effect.fromResult(Messages.approve(first.messages, firstId, { count: 3 }))
    const decided = yield* Effect.fromResult(Messages.reject(approved, secondId, "Two calls are one too many"))
    const second = yield* resume(decided)
    expect(second.outcome._tag).toBe("Complete")
    expect(ran).toEqual([{ count: 3 }])
    expect(server.requests).toHaveLength(2)

    const secondBody = server.requests[1]!.body as { readonly messages: ReadonlyArray<unknown> }
    expect(secondBody.messages).toEqual([
      { role: "user", content: [{ type: "text", text: ask }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "I'll use the test_tool twice as requested - first with count 1, then with count 2." },
          // The model sees the edited arguments.
          { type: "tool_use", id: firstId, name: "test_tool", input: { count: 3 } },
          { type: "tool_use", id: secondId, name: "test_tool", input: { count: 2 } }
        ]
      },
      {
        // The answers of one response: one user message, in call order.
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: firstId, content: "Called with 3" },
          {
            type: "tool_result",
            tool_use_id: secondId,
            content: JSON.stringify({ error: "The user rejected this tool call; it did not run. Reason: Two calls are one too many" }),
            is_error: true
          }
        ]
      }
    ])
    const answer = Messages.lastResponse(second.messages)!
    return { answer, server }
  })

describe("Chat end to end: AnthropicLanguageModel", () => {
  it.effect("pauses on two tool_use calls, approves one with an edit, rejects the other with a reason, completes", () =>
    Effect.gen(function*() {
      const { answer } = yield* run("complete")
      expect(Messages.textOf(answer)).toContain("I've successfully used the test_tool twice")
      expect(answer.usage).toEqual({ inputTokens: 602, outputTokens: 45, cachedInputTokens: 0 })
      expect(answer.finishReason).toBe("stop")
    }))

  it.effect("the same flow streamed (input_json_delta fragments over SSE)", () =>
    Effect.gen(function*() {
      const { answer } = yield* run("stream")
      expect(Messages.textOf(answer)).toBe("Hello there!")
      expect(answer.usage).toEqual({ inputTokens: 11, outputTokens: 6 })
      expect(answer.finishReason).toBe("stop")
    }))
})

describe("tool parameters on the wire", () => {
  it.effect("a Schema.Unknown parameter is sent as its title alone, without the $id Effect 3 wrote", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("messages/text-after-tool.json")))
      const Annotate = Tool.make("annotate", { description: "Attach free-form data.", parameters: { data: Schema.Unknown } })
      const kit = Toolkit.make(Annotate)
      const layer = Layer.merge(
        AnthropicLanguageModel.layer({ model: "claude-opus-4-8", retry: false }).pipe(Layer.provide(clientLayer(server))),
        kit.toLayer({ annotate: () => Effect.void })
      )
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(layer))
      yield* chat.complete(Messages.fromUser("Hi"))
      const body = server.requests[0]!.body as { readonly tools: ReadonlyArray<{ readonly input_schema: unknown }> }
      expect(body.tools[0]!.input_schema).toStrictEqual({
        type: "object",
        required: ["data"],
        properties: { data: { title: "unknown" } },
        additionalProperties: false
      })
      expect(JSON.stringify(body)).not.toContain("$id")
    }))
})
