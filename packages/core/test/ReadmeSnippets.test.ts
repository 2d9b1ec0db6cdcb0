/**
 * Every TypeScript block of packages/core/README.md is a region of this file
 * (between `// #region name` and `// #endregion`), so each one type-checks
 * with the rest of the tests and runs below. The last test checks that the
 * README holds exactly these regions.
 */
// #region imports
import { Action, Chat, ChatError, ChatEvent, Messages, PauseReason, SignedState, Tool, Toolkit } from "@chat-ts/core"
import { Context, DateTime, Effect, Layer, Redacted, Schema, Stream } from "effect"
// #endregion
// #region test-imports
import { expect, it } from "@effect/vitest"
import { MockLanguageModel } from "@chat-ts/core/testing"
// #endregion
import { describe } from "@effect/vitest"
import { Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"

// #region tools
/** The file system the handlers use: any service of your program. */
class FileSystem extends Context.Service<FileSystem, {
  readonly list: (folder: string) => Effect.Effect<ReadonlyArray<string>>
  readonly remove: (path: string) => Effect.Effect<void, FileNotFound>
}>()("FileSystem") {}

class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {}

const ListFiles = Tool.make("list_files", {
  description: "List the files of a folder.",
  parameters: { folder: Schema.String },
  success: Schema.Array(Schema.String),
  metadata: { dangerous: false }
})

const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number }),
  failure: FileNotFound,
  metadata: { dangerous: true }
})
// #endregion

// #region toolkit
const FileTools = Toolkit.withStrategy(
  Toolkit.make(ListFiles, DeleteFiles),
  (_call, metadata) => (metadata.dangerous ? Action.RequireApproval() : Action.Execute())
)

const FileToolsLive = FileTools.toLayer({
  list_files: ({ folder }) => Effect.flatMap(FileSystem, (fs) => fs.list(folder)),
  delete_files: ({ paths }) =>
    Effect.flatMap(FileSystem, (fs) => Effect.forEach(paths, fs.remove)).pipe(Effect.as({ deleted: paths.length }))
})
// #endregion

// #region seed
/** Stands in for your UI: shows a pending call to a person and returns their answer. */
const askUser = (call: Messages.ToolCallPart): boolean => {
  const { paths } = Messages.parsedArguments(call) as { readonly paths: ReadonlyArray<string> }
  return paths.every((path) => path.endsWith(".log"))
}

const cleanUp = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: FileTools, system: "You keep servers tidy." })
  let result = yield* chat.complete(Messages.fromUser("Delete the old logs."))
  while (result.outcome._tag === "Paused") {
    let messages = result.messages
    for (const id of PauseReason.toolIds(result.outcome.reason)) {
      const call = Messages.findTool(messages, id)! // name + arguments for the person
      messages = askUser(call)
        ? yield* Effect.fromResult(Messages.approve(messages, id)) // or approve(messages, id, editedArgs)
        : yield* Effect.fromResult(Messages.reject(messages, id, "not now"))
    }
    result = yield* chat.resume(messages)
  }
  return result.outcome.value // the model's final answer
})
// #endregion

// #region edit
const keepOneLog = (messages: Messages.Messages, id: string) =>
  Messages.approve(messages, id, { paths: ["old.log"] }) // the handler runs with these; the model sees them
// #endregion

// #region strategies
/** The signed-in user, provided by your program to each turn. */
class CurrentUser extends Context.Service<CurrentUser, { readonly name: string; readonly admin: boolean }>()("CurrentUser") {}

const SendEmail = Tool.make("send_email", {
  description: "Send an email.",
  parameters: { to: Schema.String, subject: Schema.String, sendAt: Schema.optional(Schema.Number) },
  success: Schema.Struct({ queued: Schema.Boolean })
})

// A strategy may be effectful and read any service: here the current user.
const EmailTools = Toolkit.withStrategy(Toolkit.make(SendEmail), (call) =>
  Effect.gen(function*() {
    const user = yield* CurrentUser
    if (call.params.to.endsWith("@competitor.example")) return Action.Reject({ reason: "external address" })
    if (call.params.sendAt !== undefined) return Action.Defer({ at: call.params.sendAt })
    if (user.admin) return Action.Execute()
    return Action.RequireApproval({ expiresAt: DateTime.add(yield* DateTime.now, { hours: 1 }) })
  }))

// A toolkit without a strategy runs every call.
const Now = Tool.make("now", { description: "The current time.", parameters: {}, success: Schema.Number })
const ClockTools = Toolkit.make(Now)

const assistant = Effect.gen(function*() {
  // Several toolkits serve one chat; a tool name owned twice fails here with DuplicateToolName.
  const chat = yield* Chat.make({ tools: [FileTools, EmailTools, ClockTools], maxSteps: 8 })
  const result = yield* chat.complete(Messages.fromUser("Mail the report to ann@example.com")).pipe(
    Effect.provideService(CurrentUser, { name: "ann", admin: false })
  )
  return result
})
// #endregion

// #region scheduled
const Reminder = Tool.make("remind", { description: "Send a reminder.", parameters: { text: Schema.String } })
const ReminderTools = Toolkit.withStrategy(Toolkit.make(Reminder), () => Action.Defer({ after: "1 hour" }))

const remindLater = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: ReminderTools })
  // Sleeps on Effect's Clock until the reminder is due, runs it, and goes on to the answer.
  return yield* chat.complete(Messages.fromUser("Remind me to stretch."), { waitForScheduled: true })
})
// #endregion

// #region stream
const render = (event: ChatEvent.ChatEvent): string =>
  ChatEvent.ChatEvent.$match(event, {
    TextDelta: ({ text }) => text,
    ReasoningDelta: () => "",
    ToolCallDelta: () => "", // a call's arguments as they arrive (see docs/streaming.md)
    ToolCall: ({ call }) => `\n[${call.name} ${Messages.effectiveArguments(call)}]`,
    ToolResult: ({ call }) => `\n[${call.id}: ${call.status._tag}]`,
    StepFinished: ({ step, usage }) => `\n(step ${step}: ${usage.inputTokens}+${usage.outputTokens} tokens)\n`,
    AnswerInterrupted: () => "\n(interrupted by new input)\n", // see docs/streaming.md
    InputRequested: ({ call, request }) => `\n[${call.id} asks: ${request.message}]`, // e.g. an MCP elicitation
    InputSettled: () => "",
    Waiting: ({ until }) => `\n(waiting until ${new Date(until).toISOString()})`,
    Paused: ({ reason }) => `\n(paused on ${PauseReason.toolIds(reason).join(", ")})`,
    Completed: () => "\n(done)"
  })

const streamTurn = <R>(chat: Chat.Service<R>, messages: Messages.Messages, show: (text: string) => void) =>
  chat.stream(messages).pipe(
    Stream.tap((event) => Effect.sync(() => show(render(event)))),
    Stream.runLast // the last event: Paused (resolve its messages and stream them again) or Completed
  )
// #endregion

// #region structured
const Summary = Schema.Struct({ deleted: Schema.Number, kept: Schema.Array(Schema.String) })

const summarize = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: FileTools })
  const result = yield* chat.completeStructured(Messages.fromUser("Clean up, then summarize."), Summary)
  // Paused results come back the same way: resolve and call completeStructured again.
  return result.outcome._tag === "Complete" ? result.outcome.value : undefined // typed as Summary
})
// #endregion

// #region errors
const robust = (messages: Messages.Messages) =>
  Effect.gen(function*() {
    const chat = yield* Chat.make({ tools: FileTools })
    return yield* chat.complete(messages).pipe(
      // The error carries the latest messages: calls that already ran are in them and will not run again.
      Effect.catchTags({
        RateLimited: (error) => (ChatError.isRetryable(error) ? chat.resume(error.messages ?? messages) : Effect.fail(error)),
        StepLimitReached: (error) => chat.resume(error.messages, { maxSteps: 20 })
      })
    )
  })
// #endregion

// #region persistence
const store = new Map<string, string>()

const pauseAndStore = (conversationId: string) =>
  Effect.gen(function*() {
    const chat = yield* Chat.make({ tools: FileTools })
    const result = yield* chat.complete(Messages.fromUser("Delete the old logs."), {
      // Called after every change of state: a crash loses nothing, and a call stored as running never runs twice.
      checkpoint: (messages) => Effect.map(Effect.fromResult(Messages.toJson(messages)), (json) => void store.set(conversationId, json))
    })
    return result.outcome._tag
  })

const approveAllAndResume = (conversationId: string) =>
  Effect.gen(function*() {
    const chat = yield* Chat.make({ tools: FileTools }) // another process, another day
    let messages = yield* Effect.fromResult(Messages.fromJson(store.get(conversationId)!)) // StateDecodeError if tampered
    for (const call of Messages.pendingTools(messages)) messages = yield* Effect.fromResult(Messages.approve(messages, call.id))
    return yield* chat.resume(messages)
  })
// #endregion

// #region signed
const secret = Redacted.make("a server-side secret of 32 bytes or more")
// A JSON string to hand out, bound to its conversation and version (keep the latest version on the server).
const signed = (messages: Messages.Messages, version: number) => SignedState.sign(messages, secret, { conversationId: "c1", version })
// StateDecodeError if anything changed, or if it is another conversation's or an older version (a replay).
const unsigned = (json: string, latest: number) => SignedState.verify(json, secret, { conversationId: "c1", atLeastVersion: latest })
// #endregion

// #region layer
const ChatLive = Chat.layer({ tools: FileTools }) // needs the LanguageModel and FileToolsLive

const hello = Effect.gen(function*() {
  const chat = yield* Chat.Chat
  return yield* chat.complete(Messages.fromUser("Hello!"))
})
// #endregion

// #region testing
it.effect("asks before deleting, then deletes what was approved", () =>
  Effect.gen(function*() {
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "d1", name: "delete_files", arguments: { paths: ["old.log"] } }]),
      MockLanguageModel.text("Deleted old.log.")
    ])
    const removed: Array<string> = []
    const fileSystem = Layer.succeed(FileSystem, {
      list: () => Effect.succeed([]),
      remove: (path) => Effect.sync(() => void removed.push(path))
    })
    const chat = yield* Chat.make({ tools: FileTools }).pipe(
      Effect.provide(Layer.merge(model.layer, FileToolsLive.pipe(Layer.provide(fileSystem))))
    )

    const first = yield* chat.complete(Messages.fromUser("Clean up."))
    expect(first.outcome._tag).toBe("Paused")
    expect(removed).toEqual([]) // nothing ran without approval

    const done = yield* chat.resume(yield* Effect.fromResult(Messages.approve(first.messages, "d1")))
    expect(done.outcome._tag === "Complete" && done.outcome.value).toBe("Deleted old.log.")
    expect(removed).toEqual(["old.log"])
    // What the model saw of the call in its second request:
    const call = Messages.findTool(model.requests[1]!.messages, "d1")!
    expect(Messages.projectToolCall(call).result?.value).toEqual({ deleted: 1 })
  }))
// #endregion

// #region mock-function
// A script may also be a function of the request (and its index), for models that react to what they see.
const echo = MockLanguageModel.make((request, index) =>
  MockLanguageModel.text(`#${index}: ${Messages.textOf(request.messages[request.messages.length - 1]!)}`)
)
// #endregion

// ---------------------------------------------------------------------------
// Running the snippets
// ---------------------------------------------------------------------------

const memoryFileSystem = (files: Set<string>) =>
  Layer.succeed(FileSystem, {
    list: (folder) => Effect.succeed([...files].filter((file) => file.startsWith(`${folder}/`))),
    remove: (path) => (files.delete(path) ? Effect.void : Effect.fail(new FileNotFound({ path })))
  })

const withFiles = (files: Set<string>) => FileToolsLive.pipe(Layer.provide(memoryFileSystem(files)))

describe("README snippets", () => {
  it.effect("seed: approves deleting logs, rejects anything else, and completes", () =>
    Effect.gen(function*() {
      const files = new Set(["logs/a.log", "logs/keep.txt"])
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "l", name: "list_files", arguments: { folder: "logs" } }]),
        MockLanguageModel.toolCalls([
          { id: "d1", name: "delete_files", arguments: { paths: ["logs/a.log"] } },
          { id: "d2", name: "delete_files", arguments: { paths: ["logs/keep.txt"] } }
        ]),
        MockLanguageModel.text("Deleted a.log; you kept keep.txt.")
      ])
      const answer = yield* cleanUp.pipe(Effect.provide(Layer.merge(model.layer, withFiles(files))))
      expect(answer).toBe("Deleted a.log; you kept keep.txt.")
      expect([...files]).toEqual(["logs/keep.txt"])
      expect(model.requests[0]?.messages[0]).toEqual(Messages.system("You keep servers tidy."))
      const rejected = Messages.findTool(model.requests[2]!.messages, "d2")!
      expect(Messages.projectToolCall(rejected).result?.text).toContain("not now")
    }))

  it.effect("edit: the handler deletes only the edited paths", () =>
    Effect.gen(function*() {
      const files = new Set(["old.log", "new.log"])
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "d", name: "delete_files", arguments: { paths: ["old.log", "new.log"] } }]),
        MockLanguageModel.text("ok")
      ])
      const chat = yield* Chat.make({ tools: FileTools }).pipe(Effect.provide(Layer.merge(model.layer, withFiles(files))))
      const first = yield* chat.complete(Messages.fromUser("Clean."))
      yield* chat.resume(yield* Effect.fromResult(keepOneLog(first.messages, "d")))
      expect([...files]).toEqual(["new.log"])
      expect(Messages.findTool(model.requests[1]!.messages, "d")!.status).toMatchObject({
        editedArguments: "{\"paths\":[\"old.log\"]}"
      })
    }))

  it.effect("strategies: reject, defer, approval with expiry and a toolkit without strategy", () =>
    Effect.gen(function*() {
      const sent: Array<string> = []
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([
          { id: "t", name: "now" },
          { id: "x", name: "send_email", arguments: { to: "bob@competitor.example", subject: "hi" } },
          { id: "s", name: "send_email", arguments: { to: "ann@example.com", subject: "later", sendAt: 7_200_000 } },
          { id: "a", name: "send_email", arguments: { to: "ann@example.com", subject: "report" } }
        ])
      ])
      const layers = Layer.mergeAll(
        model.layer,
        withFiles(new Set()),
        EmailTools.toLayer({ send_email: ({ subject }) => Effect.sync(() => (sent.push(subject), { queued: true })) }),
        ClockTools.toLayer({ now: () => Effect.succeed(42) })
      )
      const result = yield* assistant.pipe(Effect.provide(layers))
      expect(result.outcome._tag === "Paused" && result.outcome.reason).toEqual({
        _tag: "Mixed",
        approvals: ["a"],
        scheduled: [{ id: "s", at: 7_200_000 }]
      })
      expect(Messages.findTool(result.messages, "t")!.status).toEqual({ _tag: "Completed", result: 42 })
      expect(Messages.findTool(result.messages, "x")!.status).toMatchObject({ _tag: "Rejected", by: "policy" })
      expect(Messages.findTool(result.messages, "a")!.status).toEqual({ _tag: "AwaitingApproval", expiresAt: 3_600_000 })
      expect(sent).toEqual([])
    }))

  it.effect("scheduled: the reminder runs after an hour", () =>
    Effect.gen(function*() {
      const reminded: Array<string> = []
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "r", name: "remind", arguments: { text: "stretch" } }]),
        MockLanguageModel.text("Reminded you.")
      ])
      const layers = Layer.merge(model.layer, ReminderTools.toLayer({ remind: ({ text }) => Effect.sync(() => void reminded.push(text)) }))
      const fiber = yield* remindLater.pipe(Effect.provide(layers), Effect.forkChild)
      yield* TestClock.adjust("59 minutes")
      expect(reminded).toEqual([])
      yield* TestClock.adjust("1 minute")
      const result = yield* Fiber.join(fiber)
      expect(reminded).toEqual(["stretch"])
      expect(result.outcome._tag).toBe("Complete")
    }))

  it.effect("stream: renders the loop and ends on the pause, then on the completion", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "d", name: "delete_files", arguments: { paths: ["a.log"] } }], { text: "Sure." }),
        MockLanguageModel.text("Done.")
      ])
      const written: Array<string> = []
      const chat = yield* Chat.make({ tools: FileTools }).pipe(
        Effect.provide(Layer.merge(model.layer, withFiles(new Set(["a.log"]))))
      )
      const run = (messages: Messages.Messages) => streamTurn(chat, messages, (text) => written.push(text))
      const paused = yield* run(Messages.fromUser("Delete a.log"))
      if (paused._tag !== "Some" || paused.value._tag !== "Paused") throw new Error("expected a pause")
      const done = yield* run(yield* Effect.fromResult(Messages.approve(paused.value.messages, "d")))
      expect(done._tag === "Some" && done.value._tag).toBe("Completed")
      expect(written.join("")).toBe(
        "Sure.\n[delete_files {\"paths\":[\"a.log\"]}]\n(step 1: 10+5 tokens)\n\n(paused on d)" +
          "\n[d: Completed]Done.\n(step 2: 10+5 tokens)\n\n(done)"
      )
    }))

  it.effect("structured: decodes the summary", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("{\"deleted\":0,\"kept\":[\"a.txt\"]}")])
      const value = yield* summarize.pipe(Effect.provide(Layer.merge(model.layer, withFiles(new Set()))))
      expect(value).toEqual({ deleted: 0, kept: ["a.txt"] })
    }))

  it.effect("errors: a rate limit after a tool ran is retried from the error's messages", () =>
    Effect.gen(function*() {
      const files = new Set(["logs/a.log"])
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "l", name: "list_files", arguments: { folder: "logs" } }]),
        MockLanguageModel.fail(new ChatError.RateLimited({ message: "slow down" })),
        MockLanguageModel.text("One log.")
      ])
      const result = yield* robust(Messages.fromUser("What is in logs?")).pipe(
        Effect.provide(Layer.merge(model.layer, withFiles(files)))
      )
      expect(result.outcome._tag === "Complete" && result.outcome.value).toBe("One log.")
      expect(model.requests).toHaveLength(3)
    }))

  it.effect("persistence: stored at the pause, resumed from JSON elsewhere", () =>
    Effect.gen(function*() {
      const files = new Set(["a.log"])
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "d", name: "delete_files", arguments: { paths: ["a.log"] } }]),
        MockLanguageModel.text("Deleted.")
      ])
      const layers = Layer.merge(model.layer, withFiles(files))
      expect(yield* pauseAndStore("c-1").pipe(Effect.provide(layers))).toBe("Paused")
      const result = yield* approveAllAndResume("c-1").pipe(Effect.provide(layers))
      expect(result.outcome._tag).toBe("Complete")
      expect(files.size).toBe(0)
    }))

  it.effect("signed: a signed paused conversation verifies; a changed one or an older one does not", () =>
    Effect.gen(function*() {
      const messages = Messages.fromUser("hi")
      const json = yield* signed(messages, 3)
      expect((yield* unsigned(json, 3)).messages).toEqual(messages)
      const error = yield* Effect.flip(unsigned(json.replace("hi", "ho"), 3))
      expect(error._tag).toBe("StateDecodeError")
      const replay = yield* Effect.flip(unsigned(json, 4))
      expect(replay.message).toContain("replayed")
    }))

  it.effect("layer: the chat as a service", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("Hi!")])
      const layers = ChatLive.pipe(Layer.provide(Layer.merge(model.layer, withFiles(new Set()))))
      const result = yield* hello.pipe(Effect.provide(layers))
      expect(result.outcome._tag === "Complete" && result.outcome.value).toBe("Hi!")
    }))

  it.effect("mock-function: answers from the request", () =>
    Effect.gen(function*() {
      const chat = yield* Chat.make().pipe(Effect.provide(echo.layer))
      const result = yield* chat.complete(Messages.fromUser("ping"))
      expect(result.outcome._tag === "Complete" && result.outcome.value).toBe("#0: ping")
    }))

  it("the README holds exactly the regions of this file", () => {
    const source = fs.readFileSync(new URL(import.meta.url), "utf8")
    const readme = fs.readFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), "..", "README.md"), "utf8")
    const regions = [...source.matchAll(/^\/\/ #region ([\w-]+)\n([\s\S]*?)^\/\/ #endregion$/gm)].map((m) => m[2]!.trimEnd())
    // Blocks marked `<!-- snippet: … -->` (the install section's program) are checked by the install tests.
    const blocks = [...readme.matchAll(/^(<!-- snippet: .* -->\n)?```ts\n([\s\S]*?)^```$/gm)]
      .filter((m) => m[1] === undefined)
      .map((m) => m[2]!.trimEnd())
    expect(blocks.length).toBeGreaterThan(0)
    for (const block of blocks) expect(regions).toContain(block)
    for (const region of regions) expect(blocks).toContain(region)
  })
})
