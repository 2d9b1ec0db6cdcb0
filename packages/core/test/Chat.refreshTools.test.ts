/**
 * `Chat.Options.refreshTools`: tools that change while a chat lives are read
 * again at the start of every turn and before every model call, so the next
 * request, and the handling of its response, use the current tools. A refresh
 * that fails, or reads a name owned twice, fails the turn before the model is
 * called, carrying what already ran.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Result, Schema, Stream } from "effect"
import { Action, Chat, ChatError, LanguageModel, Messages, Tool, Toolkit } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { complete, paused, statusOf } from "./support/Chat.helpers.js"

const Install = Tool.make("install", {
  description: "Installs the greeter.",
  parameters: {},
  success: Schema.String
})
const Greet = Tool.make("greet", {
  description: "Greets someone.",
  parameters: { name: Schema.String },
  success: Schema.String
})
const Wipe = Tool.make("wipe", {
  description: "Wipes the disk.",
  parameters: { disk: Schema.String },
  success: Schema.String
})

/** The names of the tools a request declared. */
const declared = (request: { readonly tools: ReadonlyArray<{ readonly name: string }> } | undefined) =>
  (request?.tools ?? []).map((tool) => tool.name)

const ask = Messages.fromUser("Say hello to Ada.")

/** What the server side of the tools holds: which sets they change to, and what ran. */
const setup = Effect.gen(function*() {
  const ran: Array<string> = []
  const installer = Toolkit.make(Install)
  const greeter = Toolkit.make(Greet)
  // A second toolkit owning `greet`: reading it next to `greeter` is a clash (found before its handler is looked up).
  const otherGreeter = Toolkit.make(Tool.make("greet", { description: "Another greet.", parameters: {}, success: Schema.String }))
  const wiper = Toolkit.withStrategy(Toolkit.make(Wipe), () => Action.RequireApproval())
  const handlers = yield* Layer.build(Layer.mergeAll(
    greeter.toLayer({ greet: ({ name }) => Effect.sync(() => (ran.push(`greet ${name}`), `Hello, ${name}!`)) }),
    wiper.toLayer({ wipe: ({ disk }) => Effect.sync(() => (ran.push(`wipe ${disk}`), `wiped ${disk}`)) })
  ))
  const sets = {
    installerOnly: { tools: [installer], handlers } satisfies Chat.ToolSet,
    withGreeter: { tools: [installer, greeter], handlers } satisfies Chat.ToolSet,
    clash: { tools: [installer, greeter, otherGreeter], handlers } satisfies Chat.ToolSet,
    withWiper: { tools: [installer, wiper], handlers } satisfies Chat.ToolSet
  }
  const state: { current: Chat.ToolSet; next?: Chat.ToolSet; reads: number } = { current: sets.installerOnly, reads: 0 }
  const installLayer = installer.toLayer({
    install: () => Effect.sync(() => (ran.push("install"), state.current = state.next ?? sets.withGreeter, "installed"))
  })
  /** A chat starting with `installer`, whose tools are read from `state.current`. */
  const chatOver = (model: MockLanguageModel.MockLanguageModel) =>
    Chat.make({ tools: installer, refreshTools: Effect.sync(() => state.current) }).pipe(
      Effect.provide(installLayer),
      Effect.provide(model.layer)
    )
  return { ran, sets, state, installLayer, installer, chatOver }
})

describe("Chat.Options.refreshTools", () => {
  it.effect("a tool added by a call is offered in the next request of the same turn, and runs with its handler", () =>
    Effect.gen(function*() {
      const { installLayer, installer, ran, state } = yield* setup
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "i", name: "install" }]),
        MockLanguageModel.toolCalls([{ id: "g", name: "greet", arguments: { name: "Ada" } }]),
        MockLanguageModel.text("Done.")
      ])
      const chat = yield* Chat.make({
        tools: installer,
        refreshTools: Effect.sync(() => (state.reads++, state.current))
      }).pipe(Effect.provide(installLayer), Effect.provide(model.layer))
      expect(chat.tools.map((tool) => tool.name)).toEqual(["install"])

      const result = yield* chat.complete(ask)
      expect(complete(result).value).toBe("Done.")
      expect(declared(model.requests[0])).toEqual(["install"])
      expect(declared(model.requests[1])).toEqual(["install", "greet"])
      expect(statusOf(result.messages, "g")).toBe("Completed")
      expect(Messages.findTool(result.messages, "g")?.status).toMatchObject({ result: "Hello, Ada!" })
      expect(ran).toEqual(["install", "greet Ada"])
      // Read at the turn's start and before each of its three model calls; `tools` shows the latest.
      expect(state.reads).toBe(4)
      expect(chat.tools.map((tool) => tool.name)).toEqual(["install", "greet"])
    }).pipe(Effect.scoped))

  it.effect("a tool removed mid-turn is not offered again, and a call to it fails clearly without running", () =>
    Effect.gen(function*() {
      const { ran, sets, state, chatOver } = yield* setup
      state.current = sets.withGreeter
      state.next = sets.installerOnly
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "i", name: "install" }]),
        MockLanguageModel.toolCalls([{ id: "g", name: "greet", arguments: { name: "Ada" } }]),
        MockLanguageModel.text("Sorry.")
      ])
      const chat = yield* chatOver(model)
      const result = yield* chat.complete(ask)
      expect(declared(model.requests[0])).toEqual(["install", "greet"])
      expect(declared(model.requests[1])).toEqual(["install"])
      expect(Messages.findTool(result.messages, "g")?.status).toMatchObject({
        _tag: "Failed",
        error: expect.stringContaining("There is no tool named 'greet'")
      })
      expect(ran).toEqual(["install"])
    }).pipe(Effect.scoped))

  it.effect("a tool added mid-turn is decided by its own toolkit's strategy", () =>
    Effect.gen(function*() {
      const { ran, sets, state, chatOver } = yield* setup
      state.next = sets.withWiper
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "i", name: "install" }]),
        MockLanguageModel.toolCalls([{ id: "w", name: "wipe", arguments: { disk: "c" } }])
      ])
      const chat = yield* chatOver(model)
      const result = yield* chat.complete(ask)
      expect(paused(result).reason).toBeDefined()
      expect(statusOf(result.messages, "w")).toBe("AwaitingApproval")
      expect(ran).toEqual(["install"])
    }).pipe(Effect.scoped))

  it.effect("the stream follows the tools too", () =>
    Effect.gen(function*() {
      const { chatOver } = yield* setup
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "i", name: "install" }]),
        MockLanguageModel.text("Done.")
      ])
      const chat = yield* chatOver(model)
      const events = yield* Stream.runCollect(chat.stream(ask))
      expect(events.at(-1)?._tag).toBe("Completed")
      expect(model.requests.map(declared)).toEqual([["install"], ["install", "greet"]])
    }).pipe(Effect.scoped))

  it.effect("a name owned twice in the tools read mid-turn: DuplicateToolName with what ran, the model not called again", () =>
    Effect.gen(function*() {
      const { ran, sets, state, chatOver } = yield* setup
      state.next = sets.clash
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "i", name: "install" }]),
        MockLanguageModel.text("Done.")
      ])
      const chat = yield* chatOver(model)
      const failed = yield* Effect.flip(chat.complete(ask))
      expect(failed).toBeInstanceOf(ChatError.DuplicateToolName)
      expect(failed).toMatchObject({ _tag: "DuplicateToolName", name: "greet" })
      expect(model.requests).toHaveLength(1)
      // The call that ran is in the error's messages: resuming from them never runs it again.
      const messages = (failed as ChatError.DuplicateToolName).messages!
      expect(statusOf(messages, "i")).toBe("Completed")

      // Still clashing: the next turn fails at its start, before the model is called.
      const again = yield* Effect.flip(chat.resume(messages))
      expect(again).toMatchObject({ _tag: "DuplicateToolName", name: "greet" })
      expect((again as ChatError.DuplicateToolName).messages).toBeUndefined()
      expect(model.requests).toHaveLength(1)

      state.current = sets.withGreeter
      const resumed = yield* chat.resume(messages)
      expect(complete(resumed).value).toBe("Done.")
      expect(declared(model.requests[1])).toEqual(["install", "greet"])
      expect(ran).toEqual(["install"])
    }).pipe(Effect.scoped))

  it.effect("a refresh that fails fails the turn with its error (with the messages when it has the field); nothing else runs", () =>
    Effect.gen(function*() {
      class ListFailed extends Schema.TaggedError<ListFailed>()("ListFailed", {
        detail: Schema.String,
        messages: Schema.optional(Schema.Array(Schema.Unknown))
      }) {}
      const { installLayer, installer, ran, state } = yield* setup
      let broken = false
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "i", name: "install" }]),
        MockLanguageModel.text("Done.")
      ])
      const install = installer.toLayer({ install: () => Effect.sync(() => (ran.push("install"), broken = true, "installed")) })
      const chat = yield* Chat.make({
        tools: installer,
        refreshTools: Effect.suspend(() => broken ? Effect.fail(new ListFailed({ detail: "the server is gone" })) : Effect.succeed(state.current))
      }).pipe(Effect.provide(install), Effect.provide(model.layer), Effect.provide(installLayer))

      const failed = yield* Effect.flip(chat.complete(ask))
      expect(failed).toBeInstanceOf(ListFailed)
      expect(failed).toMatchObject({ _tag: "ListFailed", detail: "the server is gone" })
      expect(model.requests).toHaveLength(1)
      expect(statusOf((failed as ListFailed).messages as Messages.Messages, "i")).toBe("Completed")

      // At a turn's start: the same error, the messages unchanged, the model not called.
      const atStart = yield* Effect.flip(chat.complete(ask))
      expect(atStart).toMatchObject({ _tag: "ListFailed" })
      expect((atStart as ListFailed).messages).toBeUndefined()
      expect(model.requests).toHaveLength(1)
      expect(ran).toEqual(["install"])
    }).pipe(Effect.scoped))

  it.effect("a ToolSet whose handlers are in no context: MissingToolHandler with what ran, the model not called again", () =>
    Effect.gen(function*() {
      const { installLayer, installer, ran, state } = yield* setup
      const greeter = Toolkit.make(Greet)
      // `greet`'s handler is neither in the set nor in the context of `make`.
      state.next = { tools: [installer, greeter] }
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "i", name: "install" }]),
        MockLanguageModel.text("Done.")
      ])
      const chat = yield* Chat.make({ tools: installer, refreshTools: Effect.sync(() => state.current) }).pipe(
        Effect.provide(installLayer),
        Effect.provide(model.layer)
      )
      const failed = yield* Effect.flip(chat.complete(ask))
      expect(failed).toBeInstanceOf(ChatError.MissingToolHandler)
      expect(failed).toMatchObject({ _tag: "MissingToolHandler", tool: "greet" })
      expect(failed.message).toContain("greet")
      expect(model.requests).toHaveLength(1)
      const messages = (failed as ChatError.MissingToolHandler).messages!
      expect(statusOf(messages, "i")).toBe("Completed")
      // At the next turn's start: the same typed error, nothing changed, the model not called.
      const again = yield* Effect.flip(chat.resume(messages))
      expect(again).toMatchObject({ _tag: "MissingToolHandler", tool: "greet" })
      expect((again as ChatError.MissingToolHandler).messages).toBeUndefined()
      expect(model.requests).toHaveLength(1)
      expect(ran).toEqual(["install"])
    }).pipe(Effect.scoped))

  it.effect("a refresh that dies, throws or gives no ToolSet: RefreshToolsDefect with what ran, the model not called again", () =>
    Effect.gen(function*() {
      const broken: ReadonlyArray<readonly [string, Effect.Effect<Chat.ToolSet>]> = [
        ["dies", Effect.die(new Error("the plugin registry is corrupt"))],
        ["throws", Effect.sync((): Chat.ToolSet => {
          throw new Error("the plugin registry is corrupt")
        })],
        ["gives no set", Effect.succeed(undefined as unknown as Chat.ToolSet)],
        ["gives a set without tools", Effect.succeed({} as unknown as Chat.ToolSet)]
      ]
      for (const [how, refresh] of broken) {
        const ran: Array<string> = []
        let installed = false
        const installer = Toolkit.make(Install)
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "i", name: "install" }]),
          MockLanguageModel.text("Done.")
        ])
        const chat = yield* Chat.make({
          tools: installer,
          refreshTools: Effect.suspend(() => installed ? refresh : Effect.succeed({ tools: [installer] }))
        }).pipe(
          Effect.provide(installer.toLayer({ install: () => Effect.sync(() => (ran.push("install"), installed = true, "installed")) })),
          Effect.provide(model.layer)
        )
        const failed = yield* Effect.flip(chat.complete(ask))
        expect(failed, how).toBeInstanceOf(ChatError.RefreshToolsDefect)
        expect(model.requests, how).toHaveLength(1)
        const messages = (failed as ChatError.RefreshToolsDefect).messages!
        expect(statusOf(messages, "i"), how).toBe("Completed")
        if (how !== "gives no set" && how !== "gives a set without tools") {
          expect((failed as ChatError.RefreshToolsDefect).detail, how).toContain("the plugin registry is corrupt")
        }
        const again = yield* Effect.flip(chat.resume(messages))
        expect(again, how).toBeInstanceOf(ChatError.RefreshToolsDefect)
        expect(model.requests, how).toHaveLength(1)
        expect(ran, how).toEqual(["install"])
      }
    }).pipe(Effect.scoped))

  it.effect("a refresh that is interrupted stays an interruption (not a typed error)", () =>
    Effect.gen(function*() {
      const installer = Toolkit.make(Install)
      const model = MockLanguageModel.make([MockLanguageModel.text("Done.")])
      const chat = yield* Chat.make({ tools: installer, refreshTools: Effect.interrupt }).pipe(
        Effect.provide(installer.toLayer({ install: () => Effect.succeed("installed") })),
        Effect.provide(model.layer)
      )
      const exit = yield* Effect.exit(chat.complete(ask))
      expect(Exit.hasInterrupts(exit)).toBe(true)
      expect(model.requests).toHaveLength(0)
    }))

  it.effect("Chat.make given a toolkit whose handlers are not in its context: MissingToolHandler, not a defect", () =>
    Effect.gen(function*() {
      const greeter = Toolkit.make(Greet)
      const model = MockLanguageModel.make([MockLanguageModel.text("Done.")])
      // The handlers' requirement cast away, as a JavaScript caller or a wrong cast would.
      const made = Chat.make({ tools: greeter }) as unknown as Effect.Effect<Chat.Service, Chat.MakeError, LanguageModel.LanguageModel>
      const failed = yield* Effect.flip(made.pipe(Effect.provide(model.layer)))
      expect(failed).toMatchObject({ _tag: "MissingToolHandler", tool: "greet" })
    }))

  it.effect("a paused call whose tool disappeared resumes as a failed call the model is told about; an edit for it is refused", () =>
    Effect.gen(function*() {
      const { ran, sets, state, chatOver } = yield* setup
      state.current = sets.withWiper
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "w", name: "wipe", arguments: { disk: "c" } }]),
        MockLanguageModel.text("It is gone.")
      ])
      const chat = yield* chatOver(model)
      const first = yield* chat.complete(ask)
      expect(statusOf(first.messages, "w")).toBe("AwaitingApproval")

      state.current = sets.installerOnly
      const edited = yield* Effect.fromResult(Messages.approve(first.messages, "w", { disk: "d" }))
      const refused = yield* Effect.result(chat.resume(edited))
      expect(Result.isFailure(refused) && refused.failure).toMatchObject({
        _tag: "InvalidEditedArguments",
        detail: expect.stringContaining("no tool named 'wipe'")
      })

      const resumed = yield* chat.resume(yield* chat.approve(first.messages, "w"))
      expect(complete(resumed).value).toBe("It is gone.")
      expect(Messages.findTool(resumed.messages, "w")?.status).toMatchObject({
        _tag: "Failed",
        error: "There is no tool named 'wipe'."
      })
      expect(declared(model.requests[1])).toEqual(["install"])
      expect(ran).toEqual([])
    }).pipe(Effect.scoped))

  it.effect("the same tool set read again reuses its table; a new one is built only when the toolkits or handlers change", () =>
    Effect.gen(function*() {
      const { sets, state, chatOver } = yield* setup
      const model = MockLanguageModel.make([MockLanguageModel.text("a"), MockLanguageModel.text("b"), MockLanguageModel.text("c")])
      const chat = yield* chatOver(model)
      yield* chat.complete(ask)
      const tools = chat.tools
      yield* chat.complete(ask)
      expect(chat.tools).toBe(tools)
      // An equal set (same toolkits, same handlers) in a new object: still the same table.
      state.current = { ...sets.installerOnly, tools: [...sets.installerOnly.tools] }
      yield* chat.complete(ask)
      expect(chat.tools).toBe(tools)
    }).pipe(Effect.scoped))

  it.effect("without refreshTools, the tools are fixed at make", () =>
    Effect.gen(function*() {
      const { installLayer, installer, ran } = yield* setup
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "i", name: "install" }]),
        MockLanguageModel.text("Done.")
      ])
      const chat = yield* Chat.make({ tools: installer }).pipe(Effect.provide(installLayer), Effect.provide(model.layer))
      const tools = chat.tools
      yield* chat.complete(ask)
      expect(model.requests.map(declared)).toEqual([["install"], ["install"]])
      expect(chat.tools).toBe(tools)
      expect(ran).toEqual(["install"])
    }).pipe(Effect.scoped))
})
