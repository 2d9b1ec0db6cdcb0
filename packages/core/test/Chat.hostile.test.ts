/**
 * The `Chat` shell under hostile or broken input: handlers that throw, slow
 * stores, strategies that return garbage, far-away times, results JSON cannot
 * hold, arguments that try to pick a prototype, streamed calls that share an
 * id, responses cut short, and failing checkpoints. Each case: a typed error
 * or a fail-closed state, nothing lost, nothing run unapproved or twice.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Layer, Logger, Option, Result, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Action, Chat, ChatError, ConversationStore, LanguageModel, Messages, Tool, Toolkit, Worker } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { complete, expectNothingRunning, paused, statusOf } from "./support/Chat.helpers.js"

const DAY = 86_400_000

const Work = Tool.make("work", {
  description: "Do some work.",
  parameters: { n: Schema.Number },
  success: Schema.Unknown,
  metadata: { kind: "work" as const }
})

const Pay = Tool.make("pay", {
  description: "Pay someone.",
  parameters: { to: Schema.String, amounts: Schema.Record(Schema.String, Schema.Number) },
  success: Schema.String,
  metadata: { kind: "pay" as const, limit: 100 }
})

type Handler = (params: { readonly n: number }) => Effect.Effect<unknown>

/** A chat over `work` and `pay` with a strategy and a handler given by each test; records what ran. */
const setup = (options: {
  readonly script: MockLanguageModel.Script
  readonly work?: Handler
  readonly strategy?: (call: Toolkit.Call<{ work: typeof Work; pay: typeof Pay }>) => Action.Action | Effect.Effect<Action.Action>
}) =>
  Effect.gen(function*() {
    const ran: Array<{ readonly name: string; readonly params: unknown }> = []
    let decided = 0
    const kit = Toolkit.make(Work, Pay).pipe(
      Toolkit.withStrategy((call) => {
        decided++
        return options.strategy === undefined ? Action.Execute() : options.strategy(call)
      })
    )
    const handlers = kit.toLayer({
      work: (params) => {
        ran.push({ name: "work", params })
        return options.work === undefined ? Effect.succeed(params.n) : options.work(params)
      },
      pay: (params) =>
        Effect.sync(() => {
          ran.push({ name: "pay", params })
          return "paid"
        })
    })
    const model = MockLanguageModel.make(options.script)
    const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
    return { chat, model, ran, decided: () => decided }
  })

const workCalls = (count: number) =>
  MockLanguageModel.toolCalls(Array.from({ length: count }, (_, i) => ({ id: `w${i}`, name: "work", arguments: { n: i } })))

describe("Chat: a handler that throws instead of returning an Effect", () => {
  it.effect("dies like Effect.die: the siblings finish, ToolHandlerDefect carries the messages, nothing is left Running", () =>
    Effect.gen(function*() {
      const { chat, ran } = yield* setup({
        script: [workCalls(3)],
        work: ({ n }) => {
          if (n === 1) throw new Error("thrown synchronously")
          return Effect.succeed(n)
        }
      })
      const saved: Array<Messages.Messages> = []
      const error = yield* Effect.flip(chat.complete(Messages.fromUser("Work."), {
        checkpoint: (messages) => Effect.sync(() => void saved.push(messages))
      }))
      expect(error._tag).toBe("ToolHandlerDefect")
      if (error._tag !== "ToolHandlerDefect") return
      expect(error.id).toBe("w1")
      expect(error.detail).toContain("thrown synchronously")
      expect(ran.map((r) => r.params)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }])
      expect(statusOf(error.messages, "w0")).toBe("Completed")
      expect(statusOf(error.messages, "w1")).toBe("Failed")
      expect(statusOf(error.messages, "w2")).toBe("Completed")
      expectNothingRunning(error.messages)
      expect(saved[saved.length - 1]).toEqual(error.messages)
    }))
})

describe("Chat: a defect's text has a size (ChatError.maxDetailChars)", () => {
  it.effect("a 5 MB Effect.die reaches ToolHandlerDefect cut to the limit, with a marker saying how much was cut", () =>
    Effect.gen(function*() {
      const huge = "x".repeat(5_000_000)
      const { chat } = yield* setup({
        script: [workCalls(1)],
        work: () => Effect.die(huge)
      })
      const error = yield* Effect.flip(chat.complete(Messages.fromUser("Work.")))
      expect(error._tag).toBe("ToolHandlerDefect")
      if (error._tag !== "ToolHandlerDefect") return
      expect(error.detail.length).toBeLessThan(ChatError.maxDetailChars + 100)
      expect(error.detail).toMatch(/… \(\d+ more characters cut\)$/)
      expect(error.message.length).toBeLessThan(ChatError.maxDetailChars + 200)
      expect(statusOf(error.messages, "w0")).toBe("Failed")
      expect(JSON.stringify(error.messages)).not.toContain("x".repeat(ChatError.maxDetailChars))
    }))

  it("boundDetail keeps a short text as it is and never splits a surrogate pair", () => {
    expect(ChatError.boundDetail("short")).toBe("short")
    const text = `${"a".repeat(ChatError.maxDetailChars - 1)}😀tail`
    const cut = ChatError.boundDetail(text)
    expect(cut.startsWith(`${"a".repeat(ChatError.maxDetailChars - 1)}…`)).toBe(true)
    expect(cut).toContain(`(${text.length - ChatError.maxDetailChars + 1} more characters cut)`)
  })
})

describe("Chat: checkpoints of one turn are serialised, with a store whose save is asynchronous", () => {
  for (const count of [2, 5, 20]) {
    it.live(`${count} parallel calls: no conflict with itself, the last checkpoint is the returned state`, () =>
      Effect.gen(function*() {
        const memory = yield* ConversationStore.makeMemory
        const saves: Array<number> = []
        const slow: ConversationStore.Service = {
          ...memory,
          // Each save takes a little real time, so that concurrent saves would overlap.
          save: (id, messages, options) =>
            Effect.sleep("2 millis").pipe(
              Effect.andThen(memory.save(id, messages, options)),
              Effect.tap((stored) => Effect.sync(() => void saves.push(stored.version)))
            )
        }
        const { chat, ran } = yield* setup({ script: [workCalls(count), MockLanguageModel.text("Done.")] })
        const result = yield* chat.complete(Messages.fromUser("Work."), { checkpoint: ConversationStore.checkpoint(slow, "c", 0) })
        expect(complete(result).value).toBe("Done.")
        expect(ran).toHaveLength(count)
        const stored = Option.getOrThrow(yield* memory.load("c"))
        expect(stored.messages).toEqual(result.messages)
        expectNothingRunning(stored.messages)
        // In order: every save is the next version.
        expect(saves).toEqual(saves.map((_, i) => i + 1))
      }))
  }
})

describe("Chat: strategy output is validated", () => {
  const garbage: ReadonlyArray<[string, unknown]> = [
    ["a mistyped tag", { _tag: "Exceute" }],
    ["undefined", undefined],
    ["a string", "Execute"],
    ["a Defer at NaN", Action.Defer({ at: Number.NaN })],
    ["a Defer at Infinity", Action.Defer({ at: Number.POSITIVE_INFINITY })],
    ["a Defer with no time", { _tag: "Defer" }],
    ["a Defer after an infinite duration", Action.Defer({ after: Number.POSITIVE_INFINITY })],
    ["a Defer after NaN", Action.Defer({ after: Number.NaN })],
    // Effect reads a NaN duration as zero (the very same value as `Duration.zero`): a Duration value
    // cannot be told from "now", so none is taken.
    ["a Defer after Duration.millis(NaN)", { _tag: "Defer", after: Duration.millis(Number.NaN) }],
    ["a Defer after Duration.minutes(NaN)", { _tag: "Defer", after: Duration.minutes(Number.NaN) }],
    ["a Defer after Duration.times(Duration.hours(1), NaN)", { _tag: "Defer", after: Duration.times(Duration.hours(1), Number.NaN) }],
    ["a Defer after a valid Effect Duration (it cannot be checked)", { _tag: "Defer", after: Duration.hours(1) }],
    ["a Defer after a negative duration", Action.Defer({ after: -1 })],
    ["a Defer after { minutes: NaN }", Action.Defer({ after: { minutes: Number.NaN } })],
    ["a Defer after [NaN, 0]", Action.Defer({ after: [Number.NaN, 0] })],
    ["a Defer after \"Infinity\"", { _tag: "Defer", after: "Infinity" }],
    ["a Defer after \"NaN minutes\"", { _tag: "Defer", after: `${Number.NaN} minutes` }],
    ["a Defer at a DateTime-like object with a NaN time", { _tag: "Defer", at: { epochMilliseconds: Number.NaN, _tag: "Utc" } }],
    ["a RequireApproval with a DateTime-like object with a NaN time", {
      _tag: "RequireApproval",
      expiresAt: { epochMilliseconds: Number.NaN, _tag: "Utc" }
    }],
    ["a RequireApproval with a deadline that reads as no time at all", { _tag: "RequireApproval", expiresAt: { _tag: "Utc" } }],
    ["a RequireApproval with a NaN deadline", Action.RequireApproval({ expiresAt: Number.NaN })],
    ["a RequireApproval with an infinite deadline", Action.RequireApproval({ expiresAt: Number.POSITIVE_INFINITY })],
    ["a Reject with no reason", { _tag: "Reject" }]
  ]
  for (const [what, action] of garbage) {
    it.effect(`${what}: the call requires approval, with a warning, and the strategy is asked once`, () =>
      Effect.gen(function*() {
        const logs: Array<string> = []
        const logger = Logger.make(({ logLevel, message }) => void logs.push(`${logLevel} ${String(message)}`))
        const { chat, ran, decided } = yield* setup({
          script: [workCalls(1)],
          strategy: () => action as Action.Action
        })
        const result = yield* chat.complete(Messages.fromUser("Work.")).pipe(Effect.provide(Logger.layer([logger])))
        expect(paused(result).reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["w0"] })
        expect(Messages.findTool(result.messages, "w0")!.status).toStrictEqual({ _tag: "AwaitingApproval" })
        expect(ran).toEqual([])
        expect(decided()).toBe(1)
        expect(logs.some((line) => line.startsWith("Warn") && line.includes("could not decide"))).toBe(true)
        // Every time the state holds is finite epoch millis: it encodes.
        expect(Result.isSuccess(Messages.toJson(result.messages))).toBe(true)
      }))
  }

  it.effect("an Effect Duration as a delay is refused with a warning that says why and what to give instead", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => void logs.push(`${logLevel} ${String(message)}`))
      const { chat, ran } = yield* setup({
        script: [workCalls(1)],
        strategy: () => ({ _tag: "Defer", after: Duration.millis(Number.NaN) }) as unknown as Action.Action
      })
      const result = yield* chat.complete(Messages.fromUser("Work.")).pipe(Effect.provide(Logger.layer([logger])))
      expect(paused(result).reason._tag).toBe("AwaitingApproval")
      expect(ran).toEqual([])
      expect(logs.some((line) => line.startsWith("Warn") && line.includes("Effect Duration") && line.includes("milliseconds"))).toBe(true)
    }))

  it.effect("every delay a strategy can give and Action.Defer's types take schedules the call exactly (no Duration value needed)", () =>
    Effect.gen(function*() {
      const delays: ReadonlyArray<Action.Delay> = [3_600_000, "1 hour", "60 minutes", { hours: 1 }, { minutes: 30, seconds: 1800 }, [3600, 0], 3_600_000_000_000n]
      for (const after of delays) {
        const { chat, ran } = yield* setup({ script: [workCalls(1)], strategy: () => Action.Defer({ after }) })
        const now = yield* Clock.currentTimeMillis
        const result = yield* chat.complete(Messages.fromUser("Work later."))
        expect(Messages.findTool(result.messages, "w0")!.status, String(after)).toStrictEqual({ _tag: "Scheduled", at: now + 3_600_000 })
        expect(ran).toEqual([])
      }
      // @ts-expect-error an Effect Duration is not a delay: `Duration.millis(NaN)` would be "now"
      Action.Defer({ after: Duration.hours(1) })
      // @ts-expect-error nor are the infinite strings
      Action.Defer({ after: "Infinity" })
    }))

  it.effect("a strategy that throws synchronously fails closed too", () =>
    Effect.gen(function*() {
      const { chat, ran } = yield* setup({
        script: [workCalls(1)],
        strategy: () => {
          throw new Error("broken strategy")
        }
      })
      const result = yield* chat.complete(Messages.fromUser("Work."))
      expect(paused(result).reason._tag).toBe("AwaitingApproval")
      expect(ran).toEqual([])
    }))
})

describe("Chat: long scheduled waits wake when due", () => {
  for (const days of [25, 400]) {
    it.effect(`a call deferred ${days} days runs after ${days} days with waitForScheduled (not before)`, () =>
      Effect.gen(function*() {
        const { chat, ran } = yield* setup({
          script: [workCalls(1), MockLanguageModel.text("Done.")],
          strategy: () => Action.Defer({ after: `${days} days` })
        })
        const fiber = yield* chat.complete(Messages.fromUser("Work later."), { waitForScheduled: true }).pipe(Effect.forkChild)
        yield* TestClock.adjust(`${days * DAY - 1} millis`)
        expect(ran).toHaveLength(0)
        yield* TestClock.adjust("1 millis")
        // Bounded: the fiber must be done now, not merely eventually.
        expect(fiber.pollUnsafe()).toBeDefined()
        const result = yield* Fiber.join(fiber)
        expect(complete(result).value).toBe("Done.")
        expect(ran).toHaveLength(1)
      }))
  }

  it.effect("the wait does not end early: one day before the time, nothing has run", () =>
    Effect.gen(function*() {
      const { chat, ran } = yield* setup({
        script: [workCalls(1), MockLanguageModel.text("Done.")],
        strategy: () => Action.Defer({ after: `${60 * DAY} millis` })
      })
      const fiber = yield* chat.complete(Messages.fromUser("Work later."), { waitForScheduled: true }).pipe(Effect.forkChild)
      yield* TestClock.adjust(`${59 * DAY} millis`)
      expect(ran).toHaveLength(0)
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(`${DAY} millis`)
      expect(complete(yield* Fiber.join(fiber)).value).toBe("Done.")
      expect(ran).toHaveLength(1)
    }))
})

describe("Chat: results JSON cannot hold are caught when recorded", () => {
  const cyclic = (): unknown => {
    const value: { self?: unknown } = {}
    value.self = value
    return value
  }
  const deep = (): unknown => {
    let value: unknown = 1
    for (let i = 0; i < 10_000; i++) value = [value]
    return value
  }
  const cases: ReadonlyArray<[string, () => unknown]> = [
    ["a BigInt", () => ({ total: 10n })],
    ["a cycle", cyclic],
    ["10,000-deep nesting", deep]
  ]
  for (const [what, make] of cases) {
    it.effect(`${what}: the call fails with a clear message, the state stays writable`, () =>
      Effect.gen(function*() {
        const { chat } = yield* setup({ script: [workCalls(1)], work: () => Effect.succeed(make()) })
        const saved: Array<string> = []
        const error = yield* Effect.flip(chat.complete(Messages.fromUser("Work."), {
          checkpoint: (messages) => Effect.map(Effect.fromResult(Messages.toJson(messages)), (json) => void saved.push(json))
        }))
        expect(error._tag).toBe("ToolHandlerDefect")
        if (error._tag !== "ToolHandlerDefect") return
        expect(error.detail).toContain("cannot be")
        const call = Messages.findTool(error.messages, "w0")!
        expect(call.status._tag).toBe("Failed")
        expect(Messages.projectToolCall(call).result?.text).toContain("could not be recorded")
        // Every state was saved, the last one with the failed call; it loads back as it was.
        const last = Result.getOrThrow(Messages.fromJson(saved[saved.length - 1]!))
        expect(last).toEqual(error.messages)
      }))
  }

  // A failure the tool's failure schema does not take is shown as text: a value that cannot be made
  // text (no prototype, a toString that throws) must not kill the turn with an untyped defect.
  const unprintable: ReadonlyArray<[string, () => unknown]> = [
    ["an object without a prototype", () => Object.create(null)],
    ["a toString that throws", () => ({ toString: () => { throw new Error("boom") } })]
  ]
  for (const [what, make] of unprintable) {
    it.effect(`a handler failing with ${what}: the call fails with a text saying so, the turn goes on`, () =>
      Effect.gen(function*() {
        const { chat } = yield* setup({
          script: [workCalls(1), MockLanguageModel.text("Sorry.")],
          work: () => Effect.fail(make()) as unknown as Effect.Effect<unknown>
        })
        const result = yield* chat.complete(Messages.fromUser("Work."))
        expect(result.outcome._tag).toBe("Complete")
        const call = Messages.findTool(result.messages, "w0")!
        expect(call.status._tag).toBe("Failed")
        expect(Messages.projectToolCall(call).result?.text).toContain("cannot be written as text")
        expect(Result.isSuccess(Messages.toJson(result.messages))).toBe(true)
      }))
  }

  it("toJson never throws: a state JSON cannot hold is a StateEncodeError", () => {
    const bad: Messages.Messages = [
      Messages.user("hi"),
      { role: "assistant", parts: [{ ...Messages.toolCall({ id: "a", name: "work", arguments: "{}" }), status: { _tag: "Completed", result: 10n } }] }
    ]
    const encoded = Messages.toJson(bad)
    expect(Result.isFailure(encoded) && encoded.failure._tag).toBe("StateEncodeError")
  })

  it("fromJson refuses a document nested deeper than toJson can write, and round-trips what it accepts", () => {
    // Written by hand: JSON.stringify itself cannot write 10,000 levels.
    const documentWith = (result: string) =>
      `{"format":"chat-ts/messages","version":1,"messages":[{"role":"assistant","parts":[` +
      `{"_tag":"ToolCall","id":"a","name":"work","arguments":"{}","status":{"_tag":"Completed","result":${result}}}]}]}`
    const decoded = Messages.fromJson(documentWith(`${"[".repeat(10_000)}1${"]".repeat(10_000)}`))
    expect(Result.isFailure(decoded) && decoded.failure.detail).toContain("deeper than 256")
    const accepted = Result.getOrThrow(Messages.fromJson(documentWith(`${"[".repeat(255)}1${"]".repeat(255)}`)))
    expect(Result.getOrThrow(Messages.fromJson(Result.getOrThrow(Messages.toJson(accepted))))).toEqual(accepted)
  })
})

describe("Chat: handlers only ever see own, plain data", () => {
  const injected = "{\"to\":\"bob\",\"amounts\":{\"__proto__\":{\"isAdmin\":true}}}"

  it.effect("model arguments with a __proto__ key are refused before the strategy or the handler sees them", () =>
    Effect.gen(function*() {
      const { chat, ran, decided } = yield* setup({
        script: [
          MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: injected }]),
          MockLanguageModel.toolCalls([{ id: "p2", name: "pay", arguments: "{\"__proto__\":{\"to\":\"x\"},\"to\":\"bob\",\"amounts\":{}}" }]),
          MockLanguageModel.text("Refused.")
        ]
      })
      const result = yield* chat.complete(Messages.fromUser("Pay bob."))
      expect(complete(result).value).toBe("Refused.")
      expect(ran).toEqual([])
      expect(decided()).toBe(0)
      const error = Messages.projectToolCall(Messages.findTool(result.messages, "p1")!).result?.text
      expect(error).toContain("__proto__")
    }))

  it.effect("model arguments longer than Messages.maxArgumentChars make the call Invalid: never decided, never run, the model told", () =>
    Effect.gen(function*() {
      const pad = (length: number) => {
        const prefix = "{\"to\":\"bob\",\"amounts\":{},\"note\":\""
        return prefix + "x".repeat(length - prefix.length - 2) + "\"}"
      }
      const atLimit = pad(Messages.maxArgumentChars)
      const overLimit = pad(Messages.maxArgumentChars + 1)
      expect(atLimit.length).toBe(Messages.maxArgumentChars)
      const { chat, ran, decided } = yield* setup({
        script: [
          MockLanguageModel.toolCalls([
            { id: "long", name: "pay", arguments: overLimit },
            { id: "fits", name: "pay", arguments: atLimit }
          ]),
          MockLanguageModel.text("Done.")
        ]
      })
      const result = yield* chat.complete(Messages.fromUser("Pay bob."))
      expect(complete(result).value).toBe("Done.")
      // The call at the limit is decided and runs; the one over it is neither.
      expect(ran).toEqual([{ name: "pay", params: { to: "bob", amounts: {} } }])
      expect(decided()).toBe(1)
      const long = Messages.findTool(result.messages, "long")!
      expect(long.status._tag).toBe("Failed")
      expect(Messages.projectToolCall(long).result?.text).toContain(`more than the limit of ${Messages.maxArgumentChars} characters`)
      // The response keeps the text as the model sent it, and the state still round-trips.
      expect(long.arguments).toBe(overLimit)
      expect(Result.isSuccess(Messages.fromJson(Result.getOrThrow(Messages.toJson(result.messages))))).toBe(true)
    }))

  it.effect("a stored call with arguments past the limit, approved through Worker.resume, fails naming the limit and never runs", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const prefix = "{\"to\":\"bob\",\"amounts\":{},\"note\":\""
      const overLimit = prefix + "x".repeat(Messages.maxArgumentChars - prefix.length - 1) + "\"}"
      // A document written by hand (or by a store someone edited): the model never got this call past the check.
      const waiting: Messages.Messages = [
        Messages.user("Pay bob."),
        { role: "assistant", parts: [{ _tag: "ToolCall", id: "p1", name: "pay", arguments: overLimit, status: { _tag: "AwaitingApproval" } }] }
      ]
      yield* store.save("conv-long", waiting, { expectedVersion: 0 })
      const { chat, ran } = yield* setup({ script: [MockLanguageModel.text("Could not pay.")], strategy: () => Action.RequireApproval() })
      const result = yield* Worker.resume(chat, "conv-long", (stored) => Effect.fromResult(Messages.approve(stored.messages, "p1")))
      expect(result.outcome._tag).toBe("Complete")
      expect(ran).toEqual([])
      const saved = Option.getOrThrow(yield* store.load("conv-long"))
      const call = Messages.findTool(saved.messages, "p1")!
      expect(call.status._tag).toBe("Failed")
      expect(Messages.projectToolCall(call).result?.text).toContain(`more than the limit of ${Messages.maxArgumentChars} characters`)
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("an edited argument with a __proto__ key is refused at approval and at resume", () =>
    Effect.gen(function*() {
      const { chat, ran } = yield* setup({
        script: [MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: { to: "bob", amounts: { rent: 1 } } }])],
        strategy: () => Action.RequireApproval()
      })
      const first = yield* chat.complete(Messages.fromUser("Pay bob."))
      const refused = yield* Effect.flip(chat.approve(first.messages, "p1", JSON.parse(injected)))
      expect(refused._tag).toBe("InvalidEditedArguments")
      expect(Result.isFailure(Messages.approveJson(first.messages, "p1", injected))).toBe(true)
      // Forged state that skipped those checks is refused at resume.
      const forged = Messages.updateTool(first.messages, "p1", (call) => ({ ...call, status: { _tag: "Approved", editedArguments: injected } }))
      const atResume = yield* Effect.flip(chat.resume(forged))
      expect(atResume._tag).toBe("InvalidEditedArguments")
      expect(ran).toEqual([])
    }))

  it.effect("plain data passes: the handler gets a Record with an ordinary prototype", () =>
    Effect.gen(function*() {
      const { chat, ran } = yield* setup({
        script: [MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: { to: "bob", amounts: { rent: 1 } } }]), MockLanguageModel.text("ok")]
      })
      yield* chat.complete(Messages.fromUser("Pay bob."))
      const params = ran[0]!.params as { readonly amounts: object }
      expect(Object.getPrototypeOf(params.amounts)).toBe(Object.prototype)
      expect((params.amounts as { readonly isAdmin?: unknown }).isAdmin).toBeUndefined()
    }))
})

describe("Chat: streamed calls that share an id", () => {
  const sameIds: LanguageModel.Response = {
    parts: [
      Messages.toolCall({ id: "dup", name: "work", arguments: "{\"n\":1}" }),
      Messages.toolCall({ id: "dup", name: "work", arguments: "{\"n\":2}" })
    ],
    usage: { inputTokens: 1, outputTokens: 1 },
    finishReason: "tool-calls"
  }
  for (const mode of ["generate", "stream"] as const) {
    it.effect(`${mode}: both calls run, apart, with unique ids`, () =>
      Effect.gen(function*() {
        const { chat, ran } = yield* setup({ script: [MockLanguageModel.text("", { parts: sameIds.parts, finishReason: "tool-calls" }), MockLanguageModel.text("Done.")] })
        const result = mode === "generate"
          ? yield* chat.complete(Messages.fromUser("Work."))
          : yield* chat.stream(Messages.fromUser("Work.")).pipe(
            Stream.runLast,
            Effect.map((last) => {
              const event = Option.getOrThrow(last)
              if (event._tag !== "Completed") throw new Error(`expected Completed, got ${event._tag}`)
              return { messages: event.messages }
            })
          )
        expect(ran.map((r) => r.params)).toEqual([{ n: 1 }, { n: 2 }])
        const ids = Messages.toolCalls(result.messages).map((call) => call.id)
        expect(ids).toEqual(["dup", "dup_2"])
      }))
  }
})

describe("Chat: a response cut short runs none of its calls", () => {
  it.effect("finish reason length: the calls fail with the reason, the model is asked again and its next calls run", () =>
    Effect.gen(function*() {
      const { chat, model, ran } = yield* setup({
        script: [
          { ...workCalls(2), finishReason: "length" },
          workCalls(1),
          MockLanguageModel.text("Done.")
        ]
      })
      // The retried call reuses id w0: ids are made unique across the conversation.
      const result = yield* chat.complete(Messages.fromUser("Work."))
      expect(complete(result).value).toBe("Done.")
      expect(ran).toHaveLength(1)
      const second = model.requests[1]!
      const cut = Messages.findTool(second.messages, "w0")!
      expect(Messages.projectToolCall(cut).result?.text).toContain("cut off")
    }))
})

describe("Chat: errors raised after the state changed carry the latest messages", () => {
  for (const [what, error] of [
    ["StoreError", new ChatError.StoreError({ detail: "disk full" })],
    ["ConcurrentModification", new ChatError.ConcurrentModification({ id: "c", expectedVersion: 3, actualVersion: 4 })]
  ] as const) {
    it.effect(`a ${what} from a checkpoint after a tool ran keeps the tool's result in error.messages`, () =>
      Effect.gen(function*() {
        const { chat, ran } = yield* setup({ script: [workCalls(1), MockLanguageModel.text("Done.")] })
        const failure = yield* Effect.flip(chat.complete(Messages.fromUser("Work."), {
          checkpoint: (messages) => statusOf(messages, "w0") === "Completed" ? Effect.fail(error) : Effect.void
        }))
        expect(failure._tag).toBe(what)
        expect(ran).toHaveLength(1)
        expect("messages" in failure && failure.messages !== undefined).toBe(true)
        const messages = (failure as { readonly messages: Messages.Messages }).messages
        expect(Messages.findTool(messages, "w0")!.status).toStrictEqual({ _tag: "Completed", result: 0 })
      }))
  }

  it.effect("a checkpoint that throws fails as a StoreError with the messages, after the siblings finished", () =>
    Effect.gen(function*() {
      const { chat, ran } = yield* setup({ script: [workCalls(2)] })
      const failure = yield* Effect.flip(chat.complete(Messages.fromUser("Work."), {
        checkpoint: (messages) => {
          if (statusOf(messages, "w0") === "Completed") throw new Error("driver crashed")
          return Effect.void
        }
      }))
      expect(failure).toMatchObject({ _tag: "StoreError" })
      expect(failure.message).toContain("driver crashed")
      expect(ran).toHaveLength(2)
      const messages = (failure as ChatError.StoreError).messages!
      expectNothingRunning(messages)
    }))
})

describe("Chat: approve through the chat checks the edit at once", () => {
  it.effect("a bad edit is InvalidEditedArguments with the messages unchanged; a good one is approved", () =>
    Effect.gen(function*() {
      const { chat, ran } = yield* setup({
        script: [MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: { to: "bob", amounts: { rent: 1 } } }]), MockLanguageModel.text("Paid.")],
        strategy: () => Action.RequireApproval()
      })
      const first = yield* chat.complete(Messages.fromUser("Pay bob."))
      const typo = yield* Effect.flip(chat.approve(first.messages, "p1", { to: "bob", amounts: { rent: "1" } }))
      expect(typo).toMatchObject({ _tag: "InvalidEditedArguments", id: "p1", name: "pay" })
      expect(typo._tag === "InvalidEditedArguments" && typo.messages).toEqual(first.messages)
      // A string is a JSON string, never JSON text: refused by the object parameters.
      const text = yield* Effect.flip(chat.approve(first.messages, "p1", "{\"to\":\"bob\",\"amounts\":{}}"))
      expect(text._tag).toBe("InvalidEditedArguments")
      const approved = yield* chat.approve(first.messages, "p1", { to: "carol", amounts: { rent: 2 } })
      expect(complete(yield* chat.resume(approved)).value).toBe("Paid.")
      expect(ran).toEqual([{ name: "pay", params: { to: "carol", amounts: { rent: 2 } } }])
    }))
})

describe("Chat: strategy metadata is typed per tool", () => {
  it.effect("a switch on the call's tool name narrows its metadata, no casts", () =>
    Effect.gen(function*() {
      const { chat, ran } = yield* setup({
        script: [
          MockLanguageModel.toolCalls([
            { id: "w", name: "work", arguments: { n: 1 } },
            { id: "p", name: "pay", arguments: { to: "bob", amounts: { rent: 500 } } }
          ])
        ],
        strategy: (call) => {
          switch (call.name) {
            case "work":
              return call.metadata.kind === "work" ? Action.Execute() : Action.Reject({ reason: "?" })
            case "pay": {
              const total = Object.values(call.params.amounts).reduce((a, b) => a + b, 0)
              return total > call.metadata.limit ? Action.RequireApproval() : Action.Execute()
            }
          }
        }
      })
      const result = yield* chat.complete(Messages.fromUser("Work and pay."))
      expect(paused(result).reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["p"] })
      expect(ran.map((r) => r.name)).toEqual(["work"])
    }))
})

describe("Chat: a provider's odd response never makes the state unwritable", () => {
  it.effect("undefined metadata fields are dropped, a BigInt in metadata is left out, NaN token counts count as 0", () =>
    Effect.gen(function*() {
      const model = {
        generate: () =>
          Effect.succeed<LanguageModel.Response>({
            parts: [
              { _tag: "Reasoning", text: "hmm", providerMetadata: { odd: { big: 1n } } },
              Messages.text("Hello.")
            ],
            usage: { inputTokens: Number.NaN, outputTokens: 3, reasoningTokens: Number.POSITIVE_INFINITY },
            finishReason: "stop",
            providerMetadata: { openai: { responseId: "r1", model: undefined } }
          })
      }
      const chat = yield* Chat.make().pipe(Effect.provide(LanguageModel.layer(LanguageModel.make(model))))
      const saved: Array<string> = []
      const result = yield* chat.complete(Messages.fromUser("Hi."), {
        checkpoint: (messages) => Effect.map(Effect.fromResult(Messages.toJson(messages)), (json) => void saved.push(json))
      })
      const response = complete(result).response
      expect(response.providerMetadata).toEqual({ openai: { responseId: "r1" } })
      expect(response.parts[0]).toEqual({ _tag: "Reasoning", text: "hmm" })
      expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 3, reasoningTokens: 0 })
      expect(Result.getOrThrow(Messages.fromJson(saved[saved.length - 1]!))).toEqual(result.messages)
    }))
})

describe("Chat: a structured-output Schema that cannot be sent", () => {
  it.effect("is a typed StructuredOutputError before any request, never a throw", () =>
    Effect.gen(function*() {
      const { chat, model } = yield* setup({ script: [MockLanguageModel.text("{}")] })
      const call = Effect.suspend(() => chat.completeStructured(Messages.fromUser("When?"), Schema.Date))
      const error = yield* Effect.flip(call)
      expect(error._tag).toBe("StructuredOutputError")
      expect(error.message).toContain("cannot be sent to the model")
      expect(model.requests).toHaveLength(0)
    }))
})
