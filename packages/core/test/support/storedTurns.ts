/**
 * Real turns of the real `Chat` on a scripted model, and the stored JSON
 * (`Messages.toJson`) of each: the documents `test/fixtures/stored-turns` recorded
 * with the code before the in-memory compaction of issue 27, which the
 * `StoredTurns` test compares byte for byte. Between them they build every
 * kind of message and status a turn makes: plain results, results with files,
 * typed failures, a response cut short, reasoning with a signature and provider
 * metadata, usage with optional counts, arguments that give a key twice, an
 * approval with edited arguments and a decision record, a rejection.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Action, Chat, Messages, Tool, Toolkit } from "../../src/index.js"
import { MockLanguageModel } from "../../src/testing/index.js"

const Noop = Tool.make("noop", { description: "Does nothing.", parameters: {}, success: Schema.Struct({ ok: Schema.Boolean }) })

const ListFiles = Tool.make("list_files", {
  description: "List files.",
  parameters: { folder: Schema.String },
  success: Schema.Array(Schema.String)
})

class Missing extends Schema.TaggedError<Missing>()("Missing", { path: Schema.String }) {}

const ReadFile = Tool.make("read_file", {
  description: "Read a file.",
  parameters: { path: Schema.String },
  success: Schema.String,
  failure: Missing
})

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number }),
  metadata: { approval: true }
})

const Screenshot = Tool.make("screenshot", {
  description: "Takes a screenshot.",
  parameters: {},
  success: Schema.Struct({ caption: Schema.String, png: Schema.String }),
  splitFiles: (encoded) => ({
    result: { caption: encoded.caption, png: { file: 0 } },
    files: [Messages.file({ mediaType: "image/png", base64: encoded.png, filename: "screen.png" })]
  })
})

const kit = Toolkit.make(Noop, ListFiles, ReadFile, DeleteFiles, Screenshot).pipe(
  Toolkit.withStrategy((_call, metadata) => ((metadata as { readonly approval?: boolean } | undefined)?.approval === true ? Action.RequireApproval() : Action.Execute()))
)

const handlers = kit.toLayer({
  noop: () => Effect.succeed({ ok: true }),
  list_files: ({ folder }) => Effect.succeed([`${folder}/a.log`, `${folder}/b.log`]),
  read_file: ({ path }) => (path === "missing" ? Effect.fail(new Missing({ path })) : Effect.succeed(`contents of ${path}`)),
  delete_files: ({ paths }) => Effect.succeed({ deleted: paths.length }),
  screenshot: () => Effect.succeed({ caption: "login", png: "iVBORw0KGgo=" })
})

const chatOn = (script: ReadonlyArray<MockLanguageModel.ScriptedResponse>) =>
  Chat.make({ tools: kit, maxSteps: 20 }).pipe(Effect.provide(Layer.merge(MockLanguageModel.make(script).layer, handlers)))

const json = (messages: Messages.Messages): string =>
  Result.getOrElse(Messages.toJson(messages), (error) => {
    throw new Error(error.detail)
  })

/** Scenario 1's turn at N=10: a no-op tool called ten times, then an answer. */
const loop = Effect.gen(function*() {
  const chat = yield* chatOn([
    ...Array.from({ length: 10 }, (_, i) =>
      MockLanguageModel.toolCalls([{ id: `call_${i + 1}`, name: "noop" }], { usage: { inputTokens: 10 + 20 * i, outputTokens: 5 } })),
    MockLanguageModel.text("Done.", { usage: { inputTokens: 220, outputTokens: 2 } })
  ])
  return (yield* chat.complete(Messages.fromUser("Go."))).messages
})

/** Several calls in one response: a list, a typed failure, a key given twice, a call needing approval; reasoning and optional counts. */
const mixed = Effect.gen(function*() {
  const chat = yield* chatOn([
    {
      text: "Let me look.",
      parts: [{ _tag: "Reasoning", text: "thinking", signature: "sig-1", providerMetadata: { openai: { itemId: "rs_1" } } }],
      toolCalls: [
        { id: "c_list", name: "list_files", arguments: { folder: "/tmp" } },
        { id: "c_read", name: "read_file", arguments: { path: "missing" } },
        { id: "c_twice", name: "list_files", arguments: "{\"folder\":\"/a\",\"folder\":\"/var\"}" },
        { id: "c_del", name: "delete_files", arguments: { paths: ["a.log"] } }
      ],
      usage: { inputTokens: 30, outputTokens: 20, reasoningTokens: 5, cachedInputTokens: 12 },
      finishReason: "tool-calls"
    },
    MockLanguageModel.text("Deleted a.log and b.log.", { usage: { inputTokens: 60, outputTokens: 7, reasoningTokens: 0 } })
  ])
  const paused = (yield* chat.complete([Messages.system("You are careful."), Messages.user("Clean /tmp.")])).messages
  const approved = Result.getOrThrow(Messages.approve(paused, "c_del", { paths: ["a.log", "b.log"] }, {
    decider: { id: "alice", roles: ["ops"] },
    at: 1_735_689_600_000
  }))
  const done = (yield* chat.resume(approved)).messages
  return { paused, approved, done }
})

/** A result whose image is kept as a file beside it. */
const files = Effect.gen(function*() {
  const chat = yield* chatOn([
    MockLanguageModel.toolCalls([{ id: "s1", name: "screenshot" }]),
    MockLanguageModel.text("I see a login form.")
  ])
  return (yield* chat.complete(Messages.fromUser("What is on screen?"))).messages
})

/** A response cut off at the token limit (its call does not run), then a rejected call. */
const refused = Effect.gen(function*() {
  const chat = yield* chatOn([
    MockLanguageModel.toolCalls([{ id: "cut_1", name: "noop" }], { finishReason: "length" }),
    MockLanguageModel.toolCalls([{ id: "del_1", name: "delete_files", arguments: { paths: ["x"] } }]),
    MockLanguageModel.text("I did not delete x.")
  ])
  const paused = (yield* chat.complete(Messages.fromUser("Delete x."))).messages
  const rejected = Result.getOrThrow(Messages.reject(paused, "del_1", "not today"))
  return { paused, done: (yield* chat.resume(rejected)).messages }
})

/** The stored JSON of every turn (and paused state) above, by name. */
export const documents: Effect.Effect<Record<string, string>, unknown> = Effect.gen(function*() {
  const m = yield* mixed
  const r = yield* refused
  return {
    loop: json(yield* loop),
    "mixed-paused": json(m.paused),
    "mixed-approved": json(m.approved),
    "mixed-done": json(m.done),
    files: json(yield* files),
    "refused-paused": json(r.paused),
    "refused-done": json(r.done)
  }
})
