/**
 * Tool results with a size (issue 32, section 4): a call's result (or failure)
 * is cut to its cap (the tool's, else its toolkit's, else 50,000 characters of
 * the text the model reads) with a marker saying how much was cut and how the
 * rest can be had; the full result goes to the application's `ToolResult.Store`
 * when it gives one. Every shell records results through the same encoding:
 * `Chat` and `Worker.resume` are checked here, a 4 MB result giving neither a
 * 4 MB model request nor a 4 MB stored document.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Option, Result, Schema } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { Action, Chat, ConversationStore, Messages, Tool, Toolkit, ToolResult, Worker } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { lastRequest, seen } from "./support/Chat.helpers.js"

/** A 4 MB text, with newlines and quotes (which JSON escapes) in it. */
const big = ("line \"x\" of a large file\n".repeat(160_000)).slice(0, 4_000_000)

const Read = Tool.make("read", {
  description: "Read a file.",
  parameters: { path: Schema.String },
  success: Schema.String
})

/** A tool whose result is an object holding the big text. */
const Dump = Tool.make("dump", {
  description: "Dump a table.",
  parameters: {},
  success: Schema.Struct({ rows: Schema.String })
})

/** A tool failing with a big typed failure. */
class Huge extends Schema.TaggedError<Huge>()("Huge", { log: Schema.String }) {}
const Crash = Tool.make("crash", {
  description: "Crash loudly.",
  parameters: {},
  failure: Huge
})

const handlers = {
  read: () => Effect.succeed(big),
  dump: () => Effect.succeed({ rows: big }),
  crash: () => Effect.fail(new Huge({ log: big }))
}

/** A chat over `kit` (the handlers above), a model that calls `name` once, then answers. */
const chatOver = (kit: Toolkit.Any, name: string, extra: Layer.Layer<never> = Layer.empty) =>
  Effect.gen(function*() {
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "c1", name, arguments: name === "read" ? { path: "big.txt" } : {} }]),
      MockLanguageModel.text("Done.")
    ])
    const chat = yield* Chat.make({ tools: kit as Toolkit.Toolkit<Record<string, Tool.Any>> }).pipe(
      Effect.provide(Layer.mergeAll(model.layer, (kit as Toolkit.Toolkit<Record<string, Tool.Any>>).toLayer(handlers as never), extra))
    )
    return { chat, model }
  })

const documentSize = (messages: Messages.Messages): number => Result.getOrThrow(Messages.toJson(messages)).length

describe("ToolResult.cut", () => {
  it("leaves a result within its cap as it is", () => {
    expect(ToolResult.cut("short", { maxChars: 5 })).toBeUndefined()
    expect(ToolResult.cut({ a: 1 }, { maxChars: 7 })).toBeUndefined()
    expect(ToolResult.cut(true, { maxChars: 4 })).toBeUndefined()
    expect(ToolResult.cut(12345678, { maxChars: 1 })?.chars).toBe(8)
    // The longest a number is written: 25 characters.
    expect(ToolResult.exceeds(-0.0000012345678901234567, 24, false)).toBe(true)
    expect(ToolResult.exceeds([-0.0000012345678901234567], 27, false)).toBe(false)
    expect(ToolResult.cut(big, { maxChars: Number.POSITIVE_INFINITY })).toBeUndefined()
  })

  it("cuts a string to its first maxChars characters, then a marker saying how much and how to get the rest", () => {
    const cut = ToolResult.cut("abcdefghij", { maxChars: 4 }) as { value: string; chars: number }
    expect(cut.chars).toBe(10)
    expect(cut.value.startsWith("abcd\n[chat-ts cut this result: shown 4 of 10 characters (the limit is 4).")).toBe(true)
    expect(cut.value).toContain("The rest was not kept: call the tool again asking for less")
    const kept = ToolResult.cut("abcdefghij", { maxChars: 4, kept: "s3://results/c1" })!
    expect(String(kept.value)).toContain("The full result is kept by the application as \"s3://results/c1\"")
  })

  it("cuts an object inside the string that holds too much, keeping its shape; else as the JSON text the model reads", () => {
    const inside = ToolResult.cut({ n: 1, rows: [{ text: "0123456789".repeat(100) }, { text: "short" }] }, { maxChars: 100 })!
    const kept = inside.value as { n: number; rows: ReadonlyArray<{ text: string }> }
    expect(kept.n).toBe(1)
    expect(kept.rows[1]).toEqual({ text: "short" })
    expect(kept.rows[0]!.text.startsWith("0123456789")).toBe(true)
    // The rest of the result and what is shown of the string fill the cap (less the one character the
    // marker's newline takes escaped).
    expect(kept.rows[0]!.text).toContain("[chat-ts cut this result: shown 99 of 1,045 characters (the limit is 100).")
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(100 + ToolResult.markerMaxChars)
    // No one string can take the cut (the rest alone is over the cap): the JSON text, cut.
    const cut = ToolResult.cut({ rows: "0123456789" }, { maxChars: 10 })!
    expect(String(cut.value).startsWith("{\"rows\":\"0")).toBe(true)
    expect(cut.chars).toBe(JSON.stringify({ rows: "0123456789" }).length)
  })

  it("never splits a surrogate pair; a long reference is shortened in the marker", () => {
    const cut = ToolResult.cut("a😀b", { maxChars: 2 })!
    expect(String(cut.value).startsWith("a\n[")).toBe(true)
    const ref = "r".repeat(1000)
    const marker = ToolResult.marker({ shown: 1, chars: 2, maxChars: 1, kept: ref })
    expect(marker.length).toBeLessThanOrEqual(ToolResult.markerMaxChars)
    expect(marker).toContain("…")
  })

  it("a failure is cut as the text it is shown as, inside {\"error\": …}", () => {
    const cut = ToolResult.cut("\n".repeat(100), { maxChars: 52, isError: true })!
    // `{"error":""}` takes 12, the marker's own newline one more when escaped; each newline of the text
    // takes two characters in JSON: 19 of them fit in the 39 left.
    expect(String(cut.value).startsWith(`${"\n".repeat(19)}\n[chat-ts cut`)).toBe(true)
    // What the model reads of it, counted as the whole was: `{"error":"` + 19 escaped newlines + `"}`.
    expect(String(cut.value)).toContain("shown 50 of 212 characters")
    expect(JSON.stringify({ error: cut.value }).length).toBeLessThanOrEqual(52 + ToolResult.markerMaxChars)
  })

  /** Any UTF-16 units: lone surrogates and control characters included. */
  const units = fc.string({ unit: fc.nat(0xffff).map((code) => String.fromCharCode(code)), maxLength: 400 })

  it("property: a marker is at most markerMaxChars, whatever the reference and the counts", () => {
    fc.assert(
      fc.property(fc.option(units, { nil: undefined }), fc.nat(), fc.nat(), fc.nat(), (kept, shown, chars, maxChars) => {
        expect(ToolResult.marker({ shown, chars: chars * 1_000, maxChars, kept }).length).toBeLessThanOrEqual(ToolResult.markerMaxChars)
      }),
      { numRuns: 300 }
    )
  })

  it("property: exceeds is exactly whether the text the model reads is longer than the cap", () => {
    const numbers = fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 8 })
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 4 }), units, numbers), fc.nat(400), fc.boolean(), (value, maxChars, isError) => {
        expect(ToolResult.exceeds(value, maxChars, isError)).toBe(ToolResult.modelText(value, isError).length > maxChars)
      }),
      { numRuns: 500 }
    )
  })

  it("property: whatever the result, the model reads at most cap + marker; within the cap, the result is unchanged", () => {
    const json = fc.jsonValue({ maxDepth: 3 })
    fc.assert(
      fc.property(fc.oneof(json, fc.string({ unit: "binary", maxLength: 400 }), units), fc.nat(300), fc.boolean(), fc.option(units, { nil: undefined }), (value, maxChars, isError, kept) => {
        const text = ToolResult.modelText(value, isError)
        const cut = ToolResult.cut(value, { maxChars, isError, kept })
        if (text.length <= maxChars) {
          expect(cut).toBeUndefined()
          return
        }
        expect(cut).toBeDefined()
        const status: Messages.ToolCallPart["status"] = isError ? { _tag: "Failed", error: cut!.value } : { _tag: "Completed", result: cut!.value }
        const shown = Messages.projectToolCall({ _tag: "ToolCall", id: "c", name: "t", arguments: "{}", status }).result!.text
        expect(shown.length).toBeLessThanOrEqual(maxChars + ToolResult.markerMaxChars)
        expect(cut!.chars).toBe(text.length)
      }),
      { numRuns: 300 }
    )
  })
})

describe("caps per tool and per toolkit", () => {
  const Small = Tool.make("read", {
    description: "Read a file.",
    parameters: { path: Schema.String },
    success: Schema.String,
    maxResultChars: 100
  })

  it("the tool's own cap, else its toolkit's, else the default; merge keeps each toolkit's", () => {
    expect(ToolResult.maxCharsOf(Read)).toBe(ToolResult.defaultMaxChars)
    expect(ToolResult.defaultMaxChars).toBe(50_000)
    expect(ToolResult.maxCharsOf(Small)).toBe(100)
    const kit = Toolkit.make(Read, Dump).pipe(Toolkit.withMaxResultChars(2_000))
    expect(ToolResult.maxCharsOf(Read, kit)).toBe(2_000)
    expect(ToolResult.maxCharsOf(Small, Toolkit.withMaxResultChars(Toolkit.make(Small), 2_000))).toBe(100)
    // (`merge`'s types take toolkits of any tools.)
    const merged = Toolkit.merge(...([kit, Toolkit.make(Crash)] as unknown as ReadonlyArray<Toolkit.Toolkit<Record<string, Tool.Any>>>))
    expect(ToolResult.maxCharsOf(Dump, merged)).toBe(2_000)
    expect(ToolResult.maxCharsOf(Crash, merged)).toBe(ToolResult.defaultMaxChars)
    // A strategy added afterwards keeps the toolkit's cap.
    expect(ToolResult.maxCharsOf(Read, Toolkit.withStrategy(kit, () => Action.Execute()))).toBe(2_000)
  })

  it.effect("a cap that is not a whole number >= 0 is refused at Chat.make, naming the tool", () =>
    Effect.gen(function*() {
      for (const bad of [-1, 1.5, Number.NaN]) {
        const tool = Tool.make("read", { description: "Read.", parameters: {}, success: Schema.String, maxResultChars: bad })
        const own = yield* Effect.flip(Chat.make({ tools: Toolkit.make(tool) }).pipe(Effect.provide(Toolkit.make(tool).toLayer({ read: () => Effect.succeed("") }))))
        expect(own).toMatchObject({ _tag: "InvalidToolSchema", tool: "read" })
        expect(own.message).toContain("maxResultChars")
        const kit = Toolkit.withMaxResultChars(Toolkit.make(Read), bad)
        const ofKit = yield* Effect.flip(Chat.make({ tools: kit }).pipe(Effect.provide(kit.toLayer({ read: () => Effect.succeed("") }))))
        expect(ofKit).toMatchObject({ _tag: "InvalidToolSchema", tool: "read" })
      }
    }).pipe(Effect.provide(MockLanguageModel.make([]).layer)))
})

describe("Chat records results within their cap", () => {
  it.effect("a 4 MB result: the next request and the stored state hold its first 50,000 characters and the marker", () =>
    Effect.gen(function*() {
      const { chat, model } = yield* chatOver(Toolkit.make(Read), "read")
      const done = yield* chat.complete(Messages.fromUser("Read big.txt"))
      const shown = seen(lastRequest(model), "c1").result!
      expect(shown.isError).toBe(false)
      expect(shown.text.length).toBeLessThanOrEqual(ToolResult.defaultMaxChars + ToolResult.markerMaxChars)
      expect(shown.text.startsWith(big.slice(0, ToolResult.defaultMaxChars))).toBe(true)
      expect(shown.text).toContain("shown 50,000 of 4,000,000 characters")
      expect(shown.text).toContain("The rest was not kept")
      // The whole request (every message) and the stored document: about 50 kB, not 4 MB.
      expect(JSON.stringify(lastRequest(model).messages).length).toBeLessThan(60_000)
      expect(documentSize(done.messages)).toBeLessThan(60_000)
    }))

  it.effect("a result within its cap is recorded exactly as before", () =>
    Effect.gen(function*() {
      const Short = Tool.make("read", { description: "Read.", parameters: { path: Schema.String }, success: Schema.String })
      const kit = Toolkit.make(Short)
      const model = MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "c1", name: "read", arguments: { path: "a" } }]), MockLanguageModel.text("ok")])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, kit.toLayer({ read: () => Effect.succeed("x".repeat(50_000)) }))))
      const done = yield* chat.complete(Messages.fromUser("Read a"))
      expect(Messages.findTool(done.messages, "c1")!.status).toEqual({ _tag: "Completed", result: "x".repeat(50_000) })
    }))

  it.effect("an object result and a typed failure are cut too, under the toolkit's cap", () =>
    Effect.gen(function*() {
      const kit = Toolkit.withMaxResultChars(Toolkit.make(Dump, Crash), 1_000)
      for (const name of ["dump", "crash"]) {
        const { chat, model } = yield* chatOver(kit, name)
        const done = yield* chat.complete(Messages.fromUser("Go"))
        const shown = seen(lastRequest(model), "c1").result!
        expect(shown.isError).toBe(name === "crash")
        expect(shown.text.length).toBeLessThanOrEqual(1_000 + ToolResult.markerMaxChars)
        expect(shown.text).toContain("(the limit is 1,000)")
        expect(documentSize(done.messages)).toBeLessThan(3_000)
      }
    }))

  it.effect("the tool's own cap wins over its toolkit's", () =>
    Effect.gen(function*() {
      const Own = Tool.make("read", { description: "Read.", parameters: { path: Schema.String }, success: Schema.String, maxResultChars: 300 })
      const { chat, model } = yield* chatOver(Toolkit.withMaxResultChars(Toolkit.make(Own), 5_000), "read")
      yield* chat.complete(Messages.fromUser("Read big.txt"))
      expect(seen(lastRequest(model), "c1").result!.text).toContain("shown 300 of 4,000,000 characters (the limit is 300)")
    }))

  it.effect("with a Store, the full result goes there and the marker names where; the state still holds only the cut", () =>
    Effect.gen(function*() {
      const memory = yield* ToolResult.makeMemoryStore
      const { chat, model } = yield* chatOver(Toolkit.make(Read), "read", Layer.succeed(ToolResult.Store, memory.store))
      const done = yield* chat.complete(Messages.fromUser("Read big.txt"))
      const text = seen(lastRequest(model), "c1").result!.text
      const ref = /kept by the application as "([^"]+)"/.exec(text)?.[1]
      expect(ref).toBeDefined()
      expect(memory.get(ref!)).toEqual({ id: "c1", tool: "read", isError: false, value: big, chars: big.length, maxChars: 50_000 })
      expect(documentSize(done.messages)).toBeLessThan(60_000)
    }))

  it.effect("a Store given to the turn (not to Chat.make) is used too", () =>
    Effect.gen(function*() {
      const memory = yield* ToolResult.makeMemoryStore
      const { chat, model } = yield* chatOver(Toolkit.make(Read), "read")
      yield* chat.complete(Messages.fromUser("Read big.txt")).pipe(Effect.provideService(ToolResult.Store, memory.store))
      const ref = /kept by the application as "([^"]+)"/.exec(seen(lastRequest(model), "c1").result!.text)?.[1]
      expect(memory.get(ref!)?.value).toBe(big)
    }))

  it.effect("the files a splitFiles takes out are sent as files and not counted: only the text is capped", () =>
    Effect.gen(function*() {
      const Shot = Tool.make("shot", {
        description: "A screenshot.",
        parameters: {},
        success: Schema.Struct({ caption: Schema.String, png: Schema.String }),
        maxResultChars: 100,
        splitFiles: ({ caption, png }) => ({ result: { caption, png: { file: 0 } }, files: [Messages.file({ mediaType: "image/png", base64: png })] })
      })
      const kit = Toolkit.make(Shot)
      const png = "A".repeat(400_000)
      const model = MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "c1", name: "shot", arguments: {} }]), MockLanguageModel.text("ok")])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, kit.toLayer({ shot: () => Effect.succeed({ caption: "login", png }) }))))
      const done = yield* chat.complete(Messages.fromUser("Look"))
      expect(Messages.findTool(done.messages, "c1")!.status).toEqual({
        _tag: "Completed",
        result: { caption: "login", png: { file: 0 } },
        files: [Messages.file({ mediaType: "image/png", base64: png })]
      })
    }))

  it.effect("a Store that fails or dies counts as not kept: the turn goes on with the cut", () =>
    Effect.gen(function*() {
      for (const keep of [() => Effect.die("disk full"), () => Effect.succeed(undefined)]) {
        const { chat, model } = yield* chatOver(Toolkit.make(Read), "read", ToolResult.layerStore(keep))
        const done = yield* chat.complete(Messages.fromUser("Read big.txt"))
        expect(done.outcome._tag).toBe("Complete")
        expect(seen(lastRequest(model), "c1").result!.text).toContain("The rest was not kept")
      }
    }))
})

describe("a Store that never answers, or interrupts itself", () => {
  it.effect("interrupting itself counts as not kept; never answering: after ToolResult.storeTimeout the turn goes on with the cut, the rest not kept", () =>
    Effect.gen(function*() {
      const interrupted = yield* chatOver(Toolkit.make(Read), "read", ToolResult.layerStore(() => Effect.interrupt))
      const done = yield* interrupted.chat.complete(Messages.fromUser("Read big.txt"))
      expect(done.outcome._tag).toBe("Complete")
      expect(seen(lastRequest(interrupted.model), "c1").result!.text).toContain("The rest was not kept")

      const { chat, model } = yield* chatOver(Toolkit.make(Read), "read", ToolResult.layerStore(() => Effect.never))
      const fiber = yield* Effect.forkChild(chat.complete(Messages.fromUser("Read big.txt")))
      yield* TestClock.adjust(Duration.subtract(ToolResult.storeTimeout, Duration.millis(1)))
      expect(model.requests.length).toBe(1)
      yield* TestClock.adjust(Duration.millis(1))
      const late = yield* Fiber.join(fiber)
      expect(late.outcome._tag).toBe("Complete")
      expect(seen(lastRequest(model), "c1").result!.text).toContain("The rest was not kept")
      expect(Duration.toMillis(ToolResult.storeTimeout)).toBe(30_000)
    }))
})

describe("Worker.resume records results within their cap", () => {
  it.effect("an approved call's 4 MB result: the stored conversation and the next request stay about 50 kB", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const kit = Toolkit.withStrategy(Toolkit.make(Read), () => Action.RequireApproval())
      const waiting: Messages.Messages = [
        Messages.user("Read big.txt"),
        { role: "assistant", parts: [{ _tag: "ToolCall", id: "c1", name: "read", arguments: "{\"path\":\"big.txt\"}", status: { _tag: "AwaitingApproval" } }] }
      ]
      yield* store.save("conv", waiting, { expectedVersion: 0 })
      const model = MockLanguageModel.make([MockLanguageModel.text("Read it.")])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, kit.toLayer(handlers as never))))
      const result = yield* Worker.resume(chat, "conv", (stored) => Effect.fromResult(Messages.approve(stored.messages, "c1")))
      expect(result.outcome._tag).toBe("Complete")
      const saved = Option.getOrThrow(yield* store.load("conv"))
      expect(documentSize(saved.messages)).toBeLessThan(60_000)
      expect(JSON.stringify(lastRequest(model).messages).length).toBeLessThan(60_000)
      expect(seen(lastRequest(model), "c1").result!.text).toContain("shown 50,000 of 4,000,000 characters")
    }).pipe(Effect.provide(ConversationStore.layerMemory)))
})
