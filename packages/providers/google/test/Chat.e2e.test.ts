/**
 * End to end: the core `Chat` runs the human-in-the-loop flow on Gemini
 * against the replay server (recorded bodies, the real `@google/genai` SDK).
 * The model proposes two calls (the first carrying a thought signature), the
 * turn pauses, a person approves one with edited arguments and rejects the
 * other with a reason, the turn resumes and completes. The second request is
 * checked part by part: the edited call, the signature echoed unchanged, and
 * the two `functionResponse` parts (a result, and an error carrying the reason).
 */
import { Action, Chat, Messages, Tool, Toolkit } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as GoogleLanguageModel from "../src/GoogleLanguageModel.js"
import { callSignature, clientLayer } from "./support/helpers.js"
import { ReplayServer } from "@chat-ts/core/testing"
import { fixture } from "./support/fixtures.js"

const GetWeather = Tool.make("get_weather", {
  description: "The weather in a city.",
  parameters: { city: Schema.String },
  success: Schema.Struct({ temperature: Schema.Number })
})

const SendEmail = Tool.make("send_email", {
  description: "Sends an email.",
  parameters: { to: Schema.String, body: Schema.String },
  success: Schema.Literal("sent")
})

/** Every call waits for a person. */
const office = Toolkit.make(GetWeather, SendEmail).pipe(Toolkit.withStrategy(() => Action.RequireApproval()))

const handlers = (ran: Array<unknown>) =>
  office.toLayer({
    get_weather: (params) => Effect.sync(() => (ran.push(params), { temperature: 21 })),
    send_email: (params) => Effect.sync(() => (ran.push(params), "sent" as const))
  })

/** Runs a streamed turn and returns its messages and how it ended, from the last event. */
const streamed = (chat: Chat.Service, messages: Messages.Messages) =>
  Effect.gen(function*() {
    const events = Array.from(yield* Stream.runCollect(chat.stream(messages)))
    const last = events[events.length - 1]
    if (last?._tag === "Paused") return { messages: last.messages, outcome: { _tag: "Paused" as const, reason: last.reason } }
    if (last?._tag === "Completed") return { messages: last.messages, outcome: { _tag: "Complete" as const } }
    throw new Error(`unexpected last event ${last?._tag}`)
  })

describe("Chat end to end: GoogleLanguageModel", () => {
  const run = (mode: "complete" | "stream") =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      if (mode === "complete") {
        server.enqueue(
          ReplayServer.json(fixture("generate/function-calls-parallel.json")),
          ReplayServer.json(fixture("generate/text-after-tools.json"))
        )
      } else {
        server.enqueue(
          ReplayServer.sse(fixture("stream/function-calls-thinking.sse")),
          ReplayServer.sse(fixture("stream/text-signature.sse"))
        )
      }
      const ran: Array<unknown> = []
      const layer = Layer.merge(
        GoogleLanguageModel.layer({ model: "gemini-3-pro-preview", retry: false }).pipe(Layer.provide(clientLayer(server))),
        handlers(ran)
      )
      const chat = yield* Chat.make({ tools: office, system: "Answer briefly." }).pipe(Effect.provide(layer))
      const turn = (messages: Messages.Messages) => (mode === "complete" ? chat.complete(messages) : streamed(chat, messages))
      const resume = (messages: Messages.Messages) => (mode === "complete" ? chat.resume(messages) : streamed(chat, messages))

      const first = yield* turn(Messages.fromUser("Weather in Paris, then email it to my boss."))
      expect(first.outcome).toMatchObject({ _tag: "Paused", reason: { _tag: "AwaitingApproval" } })
      expect(ran).toEqual([])
      const [weather, email] = Messages.pendingTools(first.messages)
      expect([weather?.name, email?.name]).toEqual(["get_weather", "send_email"])

      const approved = yield* Effect.fromResult(Messages.approve(first.messages, weather!.id, { city: "Lyon" }))
      const decided = yield* Effect.fromResult(Messages.reject(approved, email!.id, "Do not email my boss today"))
      const second = yield* resume(decided)
      expect(second.outcome._tag).toBe("Complete")
      // Only the approved call ran, with the edited arguments; the rejected one never did.
      expect(ran).toEqual([{ city: "Lyon" }])
      expect(server.requests).toHaveLength(2)

      const firstBody = server.requests[0]!.body as Record<string, unknown>
      expect(firstBody["systemInstruction"]).toEqual({ parts: [{ text: "Answer briefly." }] })
      expect(firstBody["contents"]).toEqual([{ role: "user", parts: [{ text: "Weather in Paris, then email it to my boss." }] }])
      expect(firstBody["tools"]).toEqual([{
        functionDeclarations: [
          {
            name: "get_weather",
            description: "The weather in a city.",
            parameters: { type: "OBJECT", properties: { city: { type: "STRING" } }, required: ["city"] }
          },
          {
            name: "send_email",
            description: "Sends an email.",
            parameters: { type: "OBJECT", properties: { to: { type: "STRING" }, body: { type: "STRING" } }, required: ["to", "body"] }
          }
        ]
      }])

      const secondBody = server.requests[1]!.body as { contents: ReadonlyArray<unknown> }
      expect(secondBody.contents).toEqual([
        { role: "user", parts: [{ text: "Weather in Paris, then email it to my boss." }] },
        {
          role: "model",
          parts: [
            // The edited arguments, and the signature exactly as Gemini sent it.
            { functionCall: { name: "get_weather", args: { city: "Lyon" } }, thoughtSignature: callSignature },
            { functionCall: { name: "send_email", args: { to: "boss@example.com", body: "Weather in Paris to follow." } } }
          ]
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "get_weather", response: { output: { temperature: 21 } } } },
            {
              functionResponse: {
                name: "send_email",
                response: { error: "The user rejected this tool call; it did not run. Reason: Do not email my boss today" }
              }
            }
          ]
        }
      ])
      return second
    })

  it.effect("complete → pause on two calls → approve one edited, reject the other → resume → complete", () =>
    Effect.gen(function*() {
      const second = yield* run("complete")
      expect(Messages.textOf(Messages.lastResponse(second.messages)!)).toBe(
        "It is 21 degrees in Paris. I did not email your boss, as you asked."
      )
    }))

  it.effect("the same flow streamed (chat.stream over the SSE recordings)", () =>
    Effect.gen(function*() {
      const second = yield* run("stream")
      expect(Messages.textOf(Messages.lastResponse(second.messages)!)).toBe(
        "It is 21 degrees in Paris. I did not email your boss."
      )
    }))
})
