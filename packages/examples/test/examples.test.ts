/**
 * Every example program runs against its offline scripted model; what it
 * prints and what it returns are checked.
 */
import { ChatEvent, ChatOutcome, Messages } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Fiber, FileSystem, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as Embeddings from "../src/embeddings.js"
import * as FirstCompletion from "../src/first-completion.js"
import * as HumanInTheLoop from "../src/human-in-the-loop.js"
import * as EffectAiExample from "../src/effect-ai.js"
import * as Middleware from "../src/middleware.js"
import * as Routing from "../src/routing.js"
import * as Persistence from "../src/persistence.js"
import * as ScheduledCalls from "../src/scheduled-calls.js"
import * as Models from "../src/shared/Models.js"
import * as Streaming from "../src/streaming.js"
import * as StreamingUi from "../src/streaming-ui.js"
import * as StructuredOutput from "../src/structured-output.js"
import * as ToolsWithContext from "../src/tools-with-context.js"
import * as Tools from "../src/tools.js"
import { makeTranscript, outputLayer } from "./support/capture.js"

/** Runs `program` on the scripted model with its output captured. */
const offline = (script: MockLanguageModel.Script) => {
  const transcript = makeTranscript()
  const model = MockLanguageModel.make(script)
  const layer = Layer.merge(model.layer, outputLayer(transcript))
  return { transcript, model, layer }
}

describe("first completion", () => {
  it.effect("prints the answer and its usage", () =>
    Effect.gen(function*() {
      const { layer, transcript } = offline(FirstCompletion.offline)
      const result = yield* Effect.provide(FirstCompletion.program, layer)
      expect(result.outcome._tag).toBe("Complete")
      expect(transcript.text()).toContain("A tool call is the model asking your program to run a named function")
      expect(transcript.text()).toContain("(10 tokens in, 5 out)")
    }))
})

describe("tools", () => {
  it.effect("calls get_weather, then answers from its result", () =>
    Effect.gen(function*() {
      const { layer, model, transcript } = offline(Tools.offline)
      const result = yield* Effect.provide(Tools.program, layer)
      expect(transcript.text()).toBe(
        `get_weather({"city":"Lisbon","unit":"celsius"}) -> Completed\n` +
          "Yes: it is 17°C with light rain in Lisbon, so take an umbrella.\n"
      )
      expect(ChatOutcome.isComplete(result.outcome)).toBe(true)
      expect(model.requests[0]!.tools.map((tool) => tool.name)).toEqual(["get_weather"])
    }))
})

describe("tools with context", () => {
  it.effect("small refunds run, large ones wait for approval, users without the right are refused by policy", () =>
    Effect.gen(function*() {
      const { layer, transcript } = offline(ToolsWithContext.offline)
      const [ana, bob] = yield* Effect.provide(ToolsWithContext.program, layer)
      const text = transcript.text()
      expect(text).toContain(`paused: refund_order {"orderId":"A-1002","amount":480} needs approval; a supervisor approves`)
      expect(text).not.toContain(`paused: refund_order {"orderId":"A-1001"`)
      expect(text).toContain("A-1001 refunded. A-1002 refunded.")
      expect(text).toContain("A-1001 not refunded (Bob may not issue refunds.). A-1002 not refunded (Bob may not issue refunds.).")
      const statuses = (messages: Messages.Messages) =>
        Messages.toolCalls(messages).map((call) => [call.name, call.status._tag])
      expect(statuses(ana!)).toEqual([
        ["lookup_order", "Completed"],
        ["lookup_order", "Completed"],
        ["refund_order", "Completed"],
        ["refund_order", "Completed"]
      ])
      expect(Messages.toolCalls(bob!).filter((call) => call.name === "refund_order").map((call) => call.status)).toEqual([
        { _tag: "Rejected", by: "policy", reason: "Bob may not issue refunds." },
        { _tag: "Rejected", by: "policy", reason: "Bob may not issue refunds." }
      ])
    }))
})

describe("human in the loop", () => {
  const withAnswers = (answers: ReadonlyArray<HumanInTheLoop.Answer>) => {
    const asked: Array<[string, unknown]> = []
    const rest = [...answers]
    const askUser = HumanInTheLoop.AskUser.of((name, args) =>
      Effect.sync(() => {
        asked.push([name, args])
        return rest.shift()!
      })
    )
    return { asked, askUser }
  }

  it.effect("an approval with edited arguments runs the edited call", () =>
    Effect.gen(function*() {
      const { layer, transcript } = offline(HumanInTheLoop.offline)
      const { askUser, asked } = withAnswers([{ _tag: "Approve", edited: { paths: ["app-2025-03.log"] } }])
      const result = yield* HumanInTheLoop.program.pipe(
        Effect.provideService(HumanInTheLoop.AskUser, askUser),
        Effect.provide(layer)
      )
      expect(asked).toEqual([["delete_files", { paths: ["app-2025-03.log", "app-2025-04.log"] }]])
      expect(transcript.text()).toBe("Deleted app-2025-03.log.\n")
      expect(Messages.toolCalls(result.messages)[0]!.status).toEqual({
        _tag: "Completed",
        result: { deleted: ["app-2025-03.log"] },
        editedArguments: `{"paths":["app-2025-03.log"]}`
      })
    }))

  it.effect("a rejection reaches the model with its reason", () =>
    Effect.gen(function*() {
      const { layer, transcript } = offline(HumanInTheLoop.offline)
      const { askUser } = withAnswers([{ _tag: "Reject", reason: "we still need them" }])
      yield* HumanInTheLoop.program.pipe(Effect.provideService(HumanInTheLoop.AskUser, askUser), Effect.provide(layer))
      expect(transcript.text()).toBe("I left the logs alone: we still need them\n")
    }))
})

describe("scheduled calls", () => {
  it.effect("pauses on the deferred call, then waits for it on the (test) clock", () =>
    Effect.gen(function*() {
      const { layer, transcript } = offline(ScheduledCalls.offline)
      const fiber = yield* Effect.forkChild(Effect.provide(ScheduledCalls.program, layer))
      yield* TestClock.adjust("1 second")
      expect(transcript.text()).toBe(
        "now 1970-01-01T00:00:00.000Z: paused, the reminder is due at 1970-01-01T00:00:02.000Z\n"
      )
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(fiber)
      expect(transcript.text()).toContain(`sent: {"sentAt":"1970-01-01T00:00:02.000Z"}\n`)
      expect(transcript.text()).toContain("Sam has been reminded to water the plants.\n")
      expect(result.outcome._tag).toBe("Complete")
    }))
})

describe("streaming", () => {
  it.effect("prints text and tool events as they arrive, approving at the pause", () =>
    Effect.gen(function*() {
      const { layer, transcript } = offline(Streaming.offline)
      const messages = yield* Effect.provide(Streaming.program, layer)
      expect(transcript.text()).toBe(
        [
          "Let me search the flights first.",
          `-> search_flights {"from":"Lisbon","to":"Porto","date":"2026-06-12"}`,
          "<- search_flights: Completed",
          "The cheapest is FR7712 at 64 EUR. Booking it now.",
          `-> book_flight {"flight":"FR7712"}`,
          "(approving book_flight)",
          "<- book_flight: Completed",
          "Booked! Your confirmation is FR7712-QX7P.",
          ""
        ].join("\n")
      )
      expect(Messages.turnResponses(messages)).toHaveLength(3)
    }))
})

describe("streaming for user interfaces", () => {
  it.effect("shows the call being prepared as its arguments arrive, then the structured answer filling in", () =>
    Effect.gen(function*() {
      const { layer, transcript } = offline(StreamingUi.offline)
      const trip = yield* Effect.provide(StreamingUi.program, layer)
      expect(trip).toEqual({ city: "Porto", days: 2, sights: ["Ribeira", "Livraria Lello"] })
      expect(transcript.text()).toBe(
        [
          "preparing delete_files(…",
          "preparing delete_files({\"pat…",
          "preparing delete_files({\"paths\":[…",
          "preparing delete_files({\"paths\":[\"jan.…",
          "preparing delete_files({\"paths\":[\"jan.log\",…",
          "preparing delete_files({\"paths\":[\"jan.log\",\"feb.…",
          "preparing delete_files({\"paths\":[\"jan.log\",\"feb.log\"]…",
          "preparing delete_files({\"paths\":[\"jan.log\",\"feb.log\"]}…",
          "ready: delete_files({\"paths\":[\"jan.log\",\"feb.log\"]}) [del_1]",
          "(the turn ended with Paused)",
          "so far: {}",
          "so far: {\"city\":\"Por\"}",
          "so far: {\"city\":\"Porto\"}",
          "so far: {\"city\":\"Porto\",\"days\":2}",
          "so far: {\"city\":\"Porto\",\"days\":2,\"sights\":[\"\"]}",
          "so far: {\"city\":\"Porto\",\"days\":2,\"sights\":[\"Ribe\"]}",
          "so far: {\"city\":\"Porto\",\"days\":2,\"sights\":[\"Ribeira\"]}",
          "so far: {\"city\":\"Porto\",\"days\":2,\"sights\":[\"Ribeira\",\"Li\"]}",
          "so far: {\"city\":\"Porto\",\"days\":2,\"sights\":[\"Ribeira\",\"Livrar\"]}",
          "so far: {\"city\":\"Porto\",\"days\":2,\"sights\":[\"Ribeira\",\"Livraria L\"]}",
          "so far: {\"city\":\"Porto\",\"days\":2,\"sights\":[\"Ribeira\",\"Livraria Lello\"]}",
          "2 days in Porto",
          ""
        ].join("\n")
      )
    }))

  it("track: interleaved calls are kept apart by id; a complete call leaves the map", () => {
    const events = [
      ChatEvent.ChatEvent.ToolCallDelta({ id: "a", name: "delete_files", argumentsDelta: "" }),
      ChatEvent.ChatEvent.ToolCallDelta({ id: "b", name: "delete_files", argumentsDelta: "{\"paths\"" }),
      ChatEvent.ChatEvent.ToolCallDelta({ id: "a", name: "delete_files", argumentsDelta: "{\"paths\":[]}" }),
      ChatEvent.ChatEvent.ToolCall({ call: Messages.toolCall({ id: "a", name: "delete_files", arguments: "{\"paths\":[]}" }) })
    ]
    const states = events.reduce<ReadonlyArray<StreamingUi.Preparing>>((all, event) => [...all, StreamingUi.track(all.at(-1)!, event)], [new Map()])
    expect(Object.fromEntries(states[3]!)).toEqual({
      a: { name: "delete_files", arguments: "{\"paths\":[]}" },
      b: { name: "delete_files", arguments: "{\"paths\"" }
    })
    expect([...states[4]!.keys()]).toEqual(["b"])
  })
})

describe("structured output", () => {
  it.effect("decodes the JSON answer into a typed value", () =>
    Effect.gen(function*() {
      const { layer, model, transcript } = offline(StructuredOutput.offline)
      const result = yield* Effect.provide(StructuredOutput.program, layer)
      expect(result.outcome._tag === "Complete" && result.outcome.value).toEqual({
        name: "Ada",
        likes: ["mathematics", "poetry", "long walks"]
      })
      expect(transcript.text()).toBe("Ada likes mathematics, poetry, long walks.\n")
      expect(model.requests[0]!.options.responseFormat?.name).toBe("User")
    }))
})

describe("embeddings", () => {
  it.effect("ranks the refund document first", () =>
    Effect.gen(function*() {
      const transcript = makeTranscript()
      const ranked = yield* Embeddings.program.pipe(
        Effect.provide(Models.embeddingModel({ _tag: "Offline" }, Embeddings.fakeEmbeddings())),
        Effect.provide(outputLayer(transcript))
      )
      expect(ranked[0]!.text).toContain("Refunds are paid back")
      expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score)
      expect(transcript.text().split("\n")[0]).toBe("Q: When is my refund paid back?")
    }))

  it.effect("the fake model is deterministic", () =>
    Effect.gen(function*() {
      const model = Embeddings.fakeEmbeddings(16)
      const a = yield* model.embed(["same text"])
      const b = yield* model.embed(["same text"])
      expect(a.vectors).toEqual(b.vectors)
      expect(a.vectors[0]).toHaveLength(16)
    }))
})

describe("persistence", () => {
  it.effect("pauses into a JSON file; a fresh chat approves and resumes from it", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped()
      const file = `${dir}/paused.json`

      const first = offline(Persistence.offline)
      const paused = yield* Effect.provide(Persistence.pause(file), first.layer)
      expect(paused.outcome._tag).toBe("Paused")
      expect(first.transcript.text()).toContain("Paused; saved to")
      const stored = JSON.parse(yield* fs.readFileString(file))
      expect(stored.format).toBe("chat-ts/messages")

      // A new model and a new chat: nothing is shared but the file.
      const second = offline(Persistence.offline)
      const done = yield* Effect.provide(Persistence.resume(file, { approve: true }), second.layer)
      expect(done.outcome._tag).toBe("Complete")
      expect(second.transcript.text()).toContain("Paid 84.20 EUR to ACME Power (reference PAY-ACME-8420).")
      const saved = yield* Effect.fromResult(Messages.fromJson(yield* fs.readFileString(file)))
      expect(saved).toEqual(done.messages)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("a rejection given in the second process reaches the model", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const file = `${yield* fs.makeTempDirectoryScoped()}/paused.json`
      yield* Effect.provide(Persistence.pause(file), offline(Persistence.offline).layer)
      const second = offline(Persistence.offline)
      yield* Effect.provide(Persistence.resume(file, { approve: false, reason: "not this month" }), second.layer)
      expect(second.transcript.text()).toContain("I did not pay the bill: not this month")
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("middleware", () => {
  it.effect("logs each call and puts the system prompt in front of every request", () =>
    Effect.gen(function*() {
      const transcript = makeTranscript()
      const model = MockLanguageModel.make(Middleware.offline)
      yield* Middleware.program.pipe(
        Effect.provide(Middleware.withMiddleware(model.layer)),
        Effect.provide(outputLayer(transcript))
      )
      expect(transcript.text()).toBe(
        "[model] 2 messages -> stop, 10 in / 5 out\n" +
          "Arr, a sturdy bank beats a buried chest, matey: it pays interest and no parrot can dig it up!\n"
      )
      expect(model.requests[0]!.messages[0]).toEqual(Messages.system("Answer like a friendly pirate, in one sentence."))
    }))
})

describe("routing", () => {
  it.effect("the overloaded primary falls back to the second model, recorded in the messages", () =>
    Effect.gen(function*() {
      const transcript = makeTranscript()
      const primary = Routing.offlinePrimary()
      const fallback = Routing.offlineFallback()
      const result = yield* Routing.program.pipe(
        Effect.provide(Routing.routed(primary.layer, fallback.layer)),
        Effect.provide(outputLayer(transcript))
      )
      expect(result.outcome._tag).toBe("Complete")
      expect(transcript.text()).toContain("A router keeps the chat answering when one model is rate limited or down.")
      expect(transcript.text()).toContain("(answered by fallback)")
      expect([primary.requests.length, fallback.requests.length]).toEqual([1, 1])
    }))

  it.effect("the strategy sends long conversations to the larger window first", () =>
    Effect.gen(function*() {
      const models = [{ name: "primary", contextWindow: 128_000 }, { name: "fallback", contextWindow: 1_000_000 }]
      const ask = (text: string) => ({ messages: Messages.fromUser(text), tools: [], options: {} })
      expect(yield* Routing.longContextFirst(ask("short"), models)).toEqual(["primary", "fallback"])
      expect(yield* Routing.longContextFirst(ask("x".repeat(200_001)), models)).toEqual(["fallback", "primary"])
    }))
})

describe("effect-ai", () => {
  it.effect("an effect/ai model runs chat-ts's approval loop through the bridge: edit, resume, answer", () =>
    Effect.gen(function*() {
      const transcript = makeTranscript()
      const result = yield* EffectAiExample.program.pipe(
        Effect.provide(Layer.merge(EffectAiExample.bridged(EffectAiExample.offlineModel), EffectAiExample.handlers)),
        Effect.provide(outputLayer(transcript))
      )
      expect(result.outcome._tag).toBe("Complete")
      expect(transcript.text()).toBe(
        "The model asks to run delete_files {\"paths\":[\"a.log\",\"b.log\"]}; approving a.log only.\n" +
          "Done: {\"deleted\":1}.\n"
      )
      expect(Messages.findTool(result.messages, "call_1")?.status).toEqual({
        _tag: "Completed",
        result: { deleted: 1 },
        editedArguments: "{\"paths\":[\"a.log\"]}"
      })
    }))
})

describe("effect-ai toolkit", () => {
  it.effect("an effect/ai Toolkit in a chat-ts Chat: needsApproval pauses the production deploy, approved it runs", () =>
    Effect.gen(function*() {
      const transcript = makeTranscript()
      const model = EffectAiExample.scriptedModel("deploy", { service: "api", environment: "production" })
      const result = yield* EffectAiExample.deploy.pipe(
        Effect.provide(EffectAiExample.bridged(model)),
        Effect.provide(outputLayer(transcript))
      )
      expect(result.outcome._tag).toBe("Complete")
      expect(transcript.text()).toBe(
        "Waiting for a person: deploy {\"service\":\"api\",\"environment\":\"production\"}\n" +
          "Done: {\"url\":\"https://api.production.example.com\"}.\n"
      )
      expect(Messages.findTool(result.messages, "call_1")?.status).toMatchObject({
        _tag: "Completed",
        result: { url: "https://api.production.example.com" }
      })
    }))

  it.effect("a staging deploy needs nobody: it runs at once", () =>
    Effect.gen(function*() {
      const transcript = makeTranscript()
      const model = EffectAiExample.scriptedModel("deploy", { service: "api", environment: "staging" })
      const result = yield* EffectAiExample.deploy.pipe(
        Effect.provide(EffectAiExample.bridged(model)),
        Effect.provide(outputLayer(transcript))
      )
      expect(result.outcome._tag === "Complete" && result.outcome.value).toBe("Done: {\"url\":\"https://api.staging.example.com\"}.")
      // Nobody was asked.
      expect(transcript.text()).toBe("")
    }))
})

describe("choosing the model", () => {
  const withEnv = (env: Record<string, string>) => Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

  it.effect("offline without OPENAI_API_KEY, clearly labelled", () =>
    Effect.gen(function*() {
      const choice = yield* Models.choose().pipe(withEnv({}))
      expect(choice).toEqual({ _tag: "Offline" })
      expect(Models.label(choice)).toContain("no OPENAI_API_KEY is set: answers are scripted, not generated")
    }))

  it.effect("OpenAI with a key, honouring OPENAI_BASE_URL and OPENAI_MODEL", () =>
    Effect.gen(function*() {
      const choice = yield* Models.choose().pipe(
        withEnv({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: "http://localhost:11434/v1", OPENAI_MODEL: "llama3.2" })
      )
      expect(choice).toEqual({
        _tag: "OpenAi",
        model: "llama3.2",
        embeddingModel: "text-embedding-3-small",
        baseURL: "http://localhost:11434/v1"
      })
      expect(Models.label(choice)).toBe("llama3.2 via http://localhost:11434/v1")
      expect(yield* Models.choose({ offline: true }).pipe(withEnv({ OPENAI_API_KEY: "sk-test" }))).toEqual({
        _tag: "Offline"
      })
    }))
})
