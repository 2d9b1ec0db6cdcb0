/**
 * The files a result carries have a size (issue 32, section 4): a tool's
 * `splitFiles` (an MCP server's images) gave the state and the next model
 * request every byte of them, so one 6 MB screenshot was a 6 MB document and a
 * request Anthropic refuses. Now at most the tool's (else its toolkit's, else
 * 5 MiB) bytes of files are kept per call, the first ones while they fit; each
 * one left out is a note the model reads, naming it, its size, the limit and
 * where the application's `ToolResult.Store` keeps it. `Chat` and
 * `Worker.resume` are checked here, the workflow in packages/workflow.
 */
import { describe, expect, it } from "@effect/vitest"
import { Action, Chat, ConversationStore, Messages, Tool, Toolkit, ToolResult, Worker } from "../src/index.js"
import { Effect, Layer, Option, Result, Schema } from "effect"
import fc from "fast-check"
import { MockLanguageModel } from "../src/testing/index.js"
import { lastRequest, seen } from "./support/Chat.helpers.js"

/** A base64 text of `n` characters. */
const base64 = (n: number): string => "QUJD".repeat(Math.ceil(n / 4)).slice(0, n)

/** 6 MB of base64: an image over the default cap (5 MiB). */
const bigPng = base64(6_000_000)

const png = (data: string, filename?: string) =>
  Messages.file({ mediaType: "image/png", base64: data, ...(filename === undefined ? {} : { filename }) })

/** A tool returning screenshots (each a base64 PNG), the files taken out by `splitFiles`. */
const shotTool = (options: { readonly maxResultFileBytes?: number } = {}) =>
  Tool.make("shots", {
    description: "Screenshots of the page.",
    parameters: {},
    success: Schema.Struct({ caption: Schema.String, pngs: Schema.Array(Schema.String) }),
    splitFiles: ({ caption, pngs }) => ({
      result: { caption, pngs: pngs.map((_, file) => ({ file })) },
      files: pngs.map((data, index) => png(data, `shot-${index}.png`))
    }),
    ...options
  })

const documentSize = (messages: Messages.Messages): number => Result.getOrThrow(Messages.toJson(messages)).length

/** A chat over `kit` whose model calls `shots` once, then answers; the handler returns `pngs`. */
const chatOver = (any: Toolkit.Any, pngs: ReadonlyArray<string>, extra: Layer.Layer<never> = Layer.empty) =>
  Effect.gen(function*() {
    const kit = any as Toolkit.Toolkit<Record<string, Tool.Any>>
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "c1", name: "shots", arguments: {} }]),
      MockLanguageModel.text("Done.")
    ])
    const chat = yield* Chat.make({ tools: kit }).pipe(
      Effect.provide(Layer.mergeAll(model.layer, kit.toLayer({ shots: () => Effect.succeed({ caption: "login", pngs }) } as never), extra))
    )
    return { chat, model }
  })

describe("ToolResult.cutFiles", () => {
  it("keeps every file within the cap; else the first ones that fit, a note for each other one", () => {
    const files = [png(base64(100)), png(base64(200), "b.png"), png(base64(50))]
    expect(ToolResult.cutFiles("r", files, { maxFileBytes: 10_000 })).toBeUndefined()
    const size0 = ToolResult.fileBytes(files[0]!)
    // The second does not fit: it and every one after it are left out (so the kept ones keep their indexes).
    const cut = ToolResult.cutFiles("the text", files, { maxFileBytes: size0 + 100 })!
    expect(cut.files).toEqual([files[0]])
    const [text, note1, note2] = String(cut.value).split("\n")
    expect(text).toBe("the text")
    expect(note1).toBe(
      `[chat-ts: file 1 ("image/png" "b.png", ${ToolResult.fileBytes(files[1]!)} bytes) not shown: over the limit of ${size0 + 100} bytes of files in one result. It was not kept: ask the tool for a smaller one (a part, a lower resolution) if you need it.]`
    )
    expect(note2).toContain("[chat-ts: file 2 (\"image/png\", ")
    // The store's reference is named.
    const kept = ToolResult.cutFiles("r", files, { maxFileBytes: 0, kept: "bucket/c1" })!
    expect(kept.files).toEqual([])
    expect(String(kept.value)).toContain("The application keeps it with the full result as \"bucket/c1\".")
  })

  it("the notes go in an object result's filesNotShown list (its keys kept), else after its JSON text", () => {
    const files = [png(base64(1_000))]
    const object = ToolResult.cutFiles({ caption: "x", png: { file: 0 } }, files, { maxFileBytes: 10 })!
    expect(object.value).toEqual({ caption: "x", png: { file: 0 }, filesNotShown: [expect.stringContaining("[chat-ts: file 0 (")] })
    const array = ToolResult.cutFiles([{ file: 0 }], files, { maxFileBytes: 10 })!
    expect(String(array.value).startsWith("[{\"file\":0}]\n[chat-ts: file 0 (")).toBe(true)
    // A failure too, and an object that has the key already.
    const failure = ToolResult.cutFiles({ filesNotShown: 1 }, files, { maxFileBytes: 10, isError: true })!
    expect(String(failure.value).startsWith("{\"filesNotShown\":1}\n[chat-ts: file 0")).toBe(true)
  })

  it("at most maxFiles files a result, whatever their size; a long media type or name is shortened in the note", () => {
    const tiny = Array.from({ length: ToolResult.maxFiles + 5 }, () => png("QQ=="))
    const cut = ToolResult.cutFiles("r", tiny, { maxFileBytes: Number.POSITIVE_INFINITY })!
    expect(cut.files.length).toBe(ToolResult.maxFiles)
    expect(String(cut.value)).toContain(`[chat-ts: file ${ToolResult.maxFiles} ("image/png", 80 bytes) not shown: over the limit of 100 files in one result.`)
    const odd = Messages.file({ mediaType: `image/${"x".repeat(100_000)}`, filename: "\n".repeat(100_000), base64: "QQ==" })
    const note = ToolResult.fileNote({ index: 0, file: odd, maxFileBytes: 0, kept: "r".repeat(100_000) })
    expect(note.length).toBeLessThan(700)
    expect(note).not.toContain("\n")
  })

  it("past maxNotes files left out, the others share one note; with a store, it names where they are", () => {
    const many = Array.from({ length: 1_000 }, () => png(base64(100)))
    const cut = ToolResult.cutFiles("r", many, { maxFileBytes: 0, kept: "k1" })!
    const notes = String(cut.value).split("\n").slice(1)
    expect(notes).toHaveLength(ToolResult.maxNotes + 1)
    expect(notes[ToolResult.maxNotes]).toBe(
      `[chat-ts: files 10 to 999 (${(990 * ToolResult.fileBytes(many[0]!)).toLocaleString("en-US")} bytes in all) not shown: over the limit of 0 bytes or 100 files in one result. The application keeps them with the full result as "k1".]`
    )
  })

  it("property: a note is at most noteMaxChars as the model reads it, whatever the file's type, name and the reference", () => {
    const hostile = fc.string({ unit: fc.constantFrom("\"", "\\", "\u0001", "\n", "a", "😀", "\ud800"), maxLength: 400 })
    fc.assert(
      fc.property(hostile, fc.option(hostile, { nil: undefined }), fc.option(hostile, { nil: undefined }), fc.nat(), (mediaType, filename, kept, index) => {
        const file = Messages.file({ mediaType, base64: "QQ==", ...(filename === undefined ? {} : { filename }) })
        const note = ToolResult.fileNote({ index, file, maxFileBytes: Number.MAX_SAFE_INTEGER, kept })
        // Escaped once more: a note inside an object result's `filesNotShown`.
        expect(JSON.stringify(JSON.stringify(note)).length).toBeLessThanOrEqual(ToolResult.noteMaxChars)
        const rest = ToolResult.cutFiles("r", Array.from({ length: 12 }, () => file), { maxFileBytes: 0, kept })!
        const last = String(rest.value).split("\n").at(-1)!
        expect(JSON.stringify(JSON.stringify(last)).length).toBeLessThanOrEqual(ToolResult.noteMaxChars)
      }),
      { numRuns: 200 }
    )
  })

  it("property: whatever the files and the cap, the files kept are the first ones and take at most the cap (and maxFiles)", () => {
    const file = fc.record({
      mediaType: fc.string({ maxLength: 20 }),
      filename: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
      data: fc.oneof(
        fc.nat(3_000).map((n) => ({ _tag: "Base64" as const, base64: base64(n) })),
        fc.string({ maxLength: 200 }).map((url) => ({ _tag: "Url" as const, url }))
      )
    }).map(({ data, filename, mediaType }): Messages.FilePart => ({ _tag: "File", mediaType, data, ...(filename === undefined ? {} : { filename }) }))
    const files = fc.oneof(fc.array(file, { maxLength: 12 }), fc.array(file, { minLength: 95, maxLength: 110 }))
    fc.assert(
      fc.property(files, fc.oneof(fc.nat(20_000), fc.constant(Number.POSITIVE_INFINITY)), fc.jsonValue({ maxDepth: 2 }), fc.boolean(), (files, maxFileBytes, value, isError) => {
        const total = files.reduce((sum, file) => sum + ToolResult.fileBytes(file), 0)
        const cut = ToolResult.cutFiles(value, files, { maxFileBytes, isError })
        if (total <= maxFileBytes && files.length <= ToolResult.maxFiles) {
          expect(cut).toBeUndefined()
          return
        }
        expect(cut).toBeDefined()
        const kept = cut!.files
        // What the stored status holds: at most the cap, as the stored document writes it.
        const stored = JSON.stringify(kept).length - 2 - Math.max(0, kept.length - 1)
        expect(stored).toBeLessThanOrEqual(maxFileBytes)
        expect(kept.length).toBeLessThanOrEqual(ToolResult.maxFiles)
        expect(kept).toEqual(files.slice(0, kept.length))
        const text = ToolResult.modelText(cut!.value, isError)
        const noted = Math.min(files.length, kept.length + ToolResult.maxNotes)
        for (let index = kept.length; index < noted; index++) expect(text).toContain(`[chat-ts: file ${index} (`)
        if (noted < files.length) expect(text).toContain(`[chat-ts: files ${noted} to ${files.length - 1} (`)
      }),
      { numRuns: 200 }
    )
  })
})

describe("caps on files per tool and per toolkit", () => {
  it("the tool's own, else its toolkit's, else 5 MiB; withStrategy, merge and withMaxResultChars keep a toolkit's", () => {
    expect(ToolResult.defaultMaxFileBytes).toBe(5_242_880)
    expect(ToolResult.maxFileBytesOf(shotTool())).toBe(ToolResult.defaultMaxFileBytes)
    expect(ToolResult.maxFileBytesOf(shotTool({ maxResultFileBytes: 10 }))).toBe(10)
    const kit = Toolkit.make(shotTool()).pipe(Toolkit.withMaxResultFileBytes(1_000), Toolkit.withMaxResultChars(2_000))
    expect(ToolResult.maxFileBytesOf(kit.tools.shots, kit)).toBe(1_000)
    expect(ToolResult.maxCharsOf(kit.tools.shots, kit)).toBe(2_000)
    expect(ToolResult.maxFileBytesOf(shotTool({ maxResultFileBytes: 10 }), Toolkit.withMaxResultFileBytes(Toolkit.make(shotTool({ maxResultFileBytes: 10 })), 1_000))).toBe(10)
    expect(ToolResult.maxFileBytesOf(kit.tools.shots, Toolkit.withStrategy(kit, () => Action.Execute()))).toBe(1_000)
    const merged = Toolkit.merge(kit as unknown as Toolkit.Toolkit<Record<string, Tool.Any>>)
    expect(ToolResult.maxFileBytesOf(kit.tools.shots, merged)).toBe(1_000)
  })

  it.effect("a cap that is not a whole number >= 0 is refused at Chat.make, naming the tool", () =>
    Effect.gen(function*() {
      for (const bad of [-1, 0.5, Number.NaN]) {
        const own = Toolkit.make(shotTool({ maxResultFileBytes: bad }))
        const refused = yield* Effect.flip(Chat.make({ tools: own }).pipe(Effect.provide(own.toLayer({ shots: () => Effect.die("no") }))))
        expect(refused).toMatchObject({ _tag: "InvalidToolSchema", tool: "shots" })
        expect(refused.message).toContain("maxResultFileBytes")
        const kit = Toolkit.withMaxResultFileBytes(Toolkit.make(shotTool()), bad)
        const ofKit = yield* Effect.flip(Chat.make({ tools: kit }).pipe(Effect.provide(kit.toLayer({ shots: () => Effect.die("no") }))))
        expect(ofKit).toMatchObject({ _tag: "InvalidToolSchema", tool: "shots" })
        expect(ofKit.message).toContain("maxResultFileBytes")
      }
    }).pipe(Effect.provide(MockLanguageModel.make([]).layer)))
})

describe("Chat records a result's files within their cap", () => {
  it.effect("a 6 MB image: neither the stored state nor the next request holds it; the model reads a note", () =>
    Effect.gen(function*() {
      const small = base64(1_000)
      const { chat, model } = yield* chatOver(Toolkit.make(shotTool()), [small, bigPng, small])
      const done = yield* chat.complete(Messages.fromUser("Look"))
      const status = Messages.findTool(done.messages, "c1")!.status as { _tag: string; result: unknown; files: ReadonlyArray<Messages.FilePart> }
      expect(status._tag).toBe("Completed")
      // The first file fits and keeps its index; the big one and the one after it are left out.
      expect(status.files).toEqual([png(small, "shot-0.png")])
      expect(status.result).toEqual({
        caption: "login",
        pngs: [{ file: 0 }, { file: 1 }, { file: 2 }],
        filesNotShown: [
          `[chat-ts: file 1 ("image/png" "shot-1.png", 6,000,100 bytes) not shown: over the limit of 5,242,880 bytes of files in one result. It was not kept: ask the tool for a smaller one (a part, a lower resolution) if you need it.]`,
          expect.stringContaining("[chat-ts: file 2 (\"image/png\" \"shot-2.png\", 1,100 bytes) not shown")
        ]
      })
      const shown = seen(lastRequest(model), "c1").result!
      expect(shown.files).toEqual([png(small, "shot-0.png")])
      expect(shown.text).toContain("file 1 (\\\"image/png\\\" \\\"shot-1.png\\\", 6,000,100 bytes) not shown")
      expect(JSON.stringify(lastRequest(model).messages).length).toBeLessThan(10_000)
      expect(documentSize(done.messages)).toBeLessThan(10_000)
    }))

  it.effect("files within the cap are recorded exactly as before; the tool's cap wins over its toolkit's", () =>
    Effect.gen(function*() {
      const data = base64(400_000)
      const { chat } = yield* chatOver(Toolkit.make(shotTool()), [data])
      const done = yield* chat.complete(Messages.fromUser("Look"))
      expect(Messages.findTool(done.messages, "c1")!.status).toEqual({
        _tag: "Completed",
        result: { caption: "login", pngs: [{ file: 0 }] },
        files: [png(data, "shot-0.png")]
      })
      const own = Toolkit.withMaxResultFileBytes(Toolkit.make(shotTool({ maxResultFileBytes: 100_000 })), 10_000_000)
      const second = yield* chatOver(own, [data])
      const capped = yield* second.chat.complete(Messages.fromUser("Look"))
      expect(Messages.findTool(capped.messages, "c1")!.status).not.toHaveProperty("files")
      expect(seen(lastRequest(second.model), "c1").result!.text).toContain("over the limit of 100,000 bytes")
      // The toolkit's, for a tool without its own.
      const kit = Toolkit.withMaxResultFileBytes(Toolkit.make(shotTool()), 100_000)
      const third = yield* chatOver(kit, [data])
      yield* third.chat.complete(Messages.fromUser("Look"))
      expect(seen(lastRequest(third.model), "c1").result!.text).toContain("over the limit of 100,000 bytes")
    }))

  it.effect("with a Store, the full result goes there with all its files, and the note names where", () =>
    Effect.gen(function*() {
      const memory = yield* ToolResult.makeMemoryStore
      const { chat, model } = yield* chatOver(Toolkit.make(shotTool()), [bigPng], Layer.succeed(ToolResult.Store, memory.store))
      const done = yield* chat.complete(Messages.fromUser("Look"))
      const text = seen(lastRequest(model), "c1").result!.text
      const ref = /keeps it with the full result as \\"([^"\\]+)\\"/.exec(text)?.[1]
      expect(ref).toBeDefined()
      expect(memory.get(ref!)).toEqual({
        id: "c1",
        tool: "shots",
        isError: false,
        value: { caption: "login", pngs: [{ file: 0 }] },
        chars: JSON.stringify({ caption: "login", pngs: [{ file: 0 }] }).length,
        maxChars: ToolResult.defaultMaxChars,
        files: [png(bigPng, "shot-0.png")],
        maxFileBytes: ToolResult.defaultMaxFileBytes
      })
      expect(documentSize(done.messages)).toBeLessThan(10_000)
    }))

  it.effect("a result over both caps: the text is cut first, so the note of the file left out is never cut away", () =>
    Effect.gen(function*() {
      const Page = Tool.make("shots", {
        description: "A page and its picture.",
        parameters: {},
        success: Schema.String,
        splitFiles: (text) => ({ result: text, files: [png(bigPng)] })
      })
      const kit = Toolkit.make(Page)
      const text = "a line of the page\n".repeat(200_000)
      const model = MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "c1", name: "shots", arguments: {} }]), MockLanguageModel.text("ok")])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, kit.toLayer({ shots: () => Effect.succeed(text) }))))
      const done = yield* chat.complete(Messages.fromUser("Look"))
      const shown = seen(lastRequest(model), "c1").result!
      expect(shown.text.startsWith(text.slice(0, 1_000))).toBe(true)
      expect(shown.text).toContain(`shown 50,000 of ${text.length.toLocaleString("en-US")} characters`)
      expect(shown.text.endsWith("not shown: over the limit of 5,242,880 bytes of files in one result. It was not kept: ask the tool for a smaller one (a part, a lower resolution) if you need it.]")).toBe(true)
      expect(shown.text.length).toBeLessThanOrEqual(ToolResult.defaultMaxChars + ToolResult.markerMaxChars + ToolResult.noteMaxChars)
      expect(documentSize(done.messages)).toBeLessThan(60_000)
    }))

  it.effect("a failure's files are capped the same way", () =>
    Effect.gen(function*() {
      class Broken extends Schema.TaggedError<Broken>()("Broken", { png: Schema.String }) {}
      const Shot = Tool.make("shots", {
        description: "A screenshot.",
        parameters: {},
        failure: Broken,
        splitFailureFiles: (broken) => ({ result: { ...broken, png: { file: 0 } }, files: [png(broken.png)] })
      })
      const kit = Toolkit.make(Shot)
      const model = MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "c1", name: "shots", arguments: {} }]), MockLanguageModel.text("ok")])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, kit.toLayer({ shots: () => Effect.fail(new Broken({ png: bigPng })) }))))
      const done = yield* chat.complete(Messages.fromUser("Look"))
      const failed = Messages.findTool(done.messages, "c1")!.status
      expect(failed).toMatchObject({ _tag: "Failed", error: { _tag: "Broken", png: { file: 0 }, filesNotShown: [expect.stringContaining("not shown")] } })
      expect(failed).not.toHaveProperty("files")
      const shown = seen(lastRequest(model), "c1").result!
      expect(shown.isError).toBe(true)
      expect(shown.text).toContain("file 0 (\\\"image/png\\\", 6,000,076 bytes) not shown")
      expect(documentSize(done.messages)).toBeLessThan(10_000)
    }))
})

describe("Worker.resume records a result's files within their cap", () => {
  it.effect("an approved call's 6 MB image: the stored conversation and the next request stay small", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const kit = Toolkit.withStrategy(Toolkit.make(shotTool()), () => Action.RequireApproval())
      const waiting: Messages.Messages = [
        Messages.user("Look"),
        { role: "assistant", parts: [{ _tag: "ToolCall", id: "c1", name: "shots", arguments: "{}", status: { _tag: "AwaitingApproval" } }] }
      ]
      yield* store.save("conv", waiting, { expectedVersion: 0 })
      const model = MockLanguageModel.make([MockLanguageModel.text("Seen.")])
      const chat = yield* Chat.make({ tools: kit }).pipe(
        Effect.provide(Layer.merge(model.layer, kit.toLayer({ shots: () => Effect.succeed({ caption: "login", pngs: [bigPng] }) })))
      )
      const result = yield* Worker.resume(chat, "conv", (stored) => Effect.fromResult(Messages.approve(stored.messages, "c1")))
      expect(result.outcome._tag).toBe("Complete")
      const saved = Option.getOrThrow(yield* store.load("conv"))
      expect(documentSize(saved.messages)).toBeLessThan(10_000)
      expect(JSON.stringify(lastRequest(model).messages).length).toBeLessThan(10_000)
      expect(seen(lastRequest(model), "c1").result!.text).toContain("file 0 (\\\"image/png\\\" \\\"shot-0.png\\\", 6,000,100 bytes) not shown")
    }).pipe(Effect.provide(ConversationStore.layerMemory)))
})
