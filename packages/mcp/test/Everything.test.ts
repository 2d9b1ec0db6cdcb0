/**
 * The reference "everything" MCP server from npm (`@modelcontextprotocol/server-everything`), run
 * unchanged as a child process over stdio and over Streamable HTTP (127.0.0.1), end to end through an
 * `McpChat` with a scripted model: its task-only research tool (asked for approval, run through the
 * MCP tasks API, including its `input_required` clarification), its elicitation tool (a person answers
 * in the inbox: accept, decline) and its sampling tool (the chat's model answers only when the strategy
 * or a person allows it). Every wait is bounded; each test checks the server's process is gone after.
 */
import { Action, ConversationStore, Messages, PauseReason } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Result, type Scope } from "effect"
import { McpChat, McpElicitation, McpSampling, McpToolkit } from "../src/index.js"
import { type Everything, everythingServers } from "./support/reference.js"
import { alive } from "./support/servers.js"

/** Bounds a wait (a person's side of the test, a turn that waits for one). */
const within = <A, E>(effect: Effect.Effect<A, E>) =>
  effect.pipe(Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.die(new Error("nothing arrived in time")) }))

/** A promise of the SDK client, bounded. */
const sdk = <A>(run: () => Promise<A>) => within(Effect.promise(run))

/**
 * Starts a fresh server, connects with `options`, runs `use`, closes everything, and checks that the
 * server's process is gone.
 */
const withServer = <A, E>(
  start: Effect.Effect<Everything, Error, Scope.Scope>,
  options: Omit<McpToolkit.Options, "transport">,
  use: (server: McpToolkit.Service) => Effect.Effect<A, E, Scope.Scope>
) =>
  Effect.gen(function*() {
    const { pid, value } = yield* Effect.scoped(Effect.gen(function*() {
      const everything = yield* start
      const server = yield* McpToolkit.make({ ...options, transport: everything.transport })
      const pid = everything.pid(server)
      expect(alive(pid)).toBe(true)
      return { pid, value: yield* use(server) }
    }))
    expect(alive(pid)).toBe(false)
    return value
  })

/** The ids a result paused on for approval. */
const approvals = (result: { readonly outcome: { readonly _tag: string } }) => {
  const outcome = result.outcome as { readonly _tag: string; readonly reason?: PauseReason.PauseReason }
  return outcome._tag === "Paused" && outcome.reason !== undefined ? PauseReason.approvalIds(outcome.reason) : []
}

/** What the model saw of call `id` in its latest request. */
const seenByModel = (model: MockLanguageModel.MockLanguageModel, id: string): string => {
  const request = model.requests[model.requests.length - 1]!
  const call = Messages.findTool(request.messages, id)
  if (call === undefined) throw new Error(`the model's latest request has no call ${id}`)
  return JSON.stringify(Messages.projectToolCall(call))
}

const statusOf = (messages: Messages.Messages, id: string) => Messages.findTool(messages, id)?.status

/** A chat over the server's tools, answered by the scripted `model`. */
const chatCalling = (server: McpToolkit.Service, model: MockLanguageModel.MockLanguageModel) =>
  McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))

for (const [transportName, start] of everythingServers) {
  describe(`the reference everything server (${transportName})`, () => {
    it.live("lists the elicitation and sampling tools only to a client that can answer them, never those we do not declare", () =>
      Effect.gen(function*() {
        const names = (server: McpToolkit.Service) =>
          Effect.map(server.current, (snapshot) => snapshot.toolkit.list.map((tool) => tool.name))
        const plain = yield* withServer(start, {}, names)
        expect(plain).toContain("simulate-research-query")
        expect(plain).not.toContain("trigger-elicitation-request")
        expect(plain).not.toContain("trigger-sampling-request")
        const inbox = yield* McpElicitation.inbox()
        const model = MockLanguageModel.make([])
        const answering = yield* withServer(start, { elicitation: inbox.handler, sampling: { model } }, names)
        expect(answering).toEqual(expect.arrayContaining([...plain, "trigger-elicitation-request", "trigger-sampling-request"]))
        // Client-side tasks, URL-mode elicitation and roots are not declared: their tools stay hidden.
        for (const hidden of ["trigger-elicitation-request-async", "trigger-sampling-request-async", "trigger-url-elicitation", "get-roots-list"]) {
          expect(answering).not.toContain(hidden)
        }
      }))

    describe("its task-only research tool", () => {
      it.live("is offered, waits for approval, runs through the tasks API, and its report reaches the model", () =>
        withServer(start, {}, (server) =>
          Effect.gen(function*() {
            const listed = yield* sdk(() => server.client.listTools())
            expect(listed.tools.find((tool) => tool.name === "simulate-research-query")?.execution).toEqual({ taskSupport: "required" })
            const model = MockLanguageModel.make([
              MockLanguageModel.toolCalls([{ id: "r", name: "simulate-research-query", arguments: { topic: "tide pools" } }]),
              MockLanguageModel.text("Tide pools, researched.")
            ])
            const chat = yield* chatCalling(server, model)
            expect(chat.tools.map((tool) => tool.name)).toContain("simulate-research-query")

            const paused = yield* chat.complete(Messages.fromUser("Research tide pools."))
            expect(approvals(paused)).toEqual(["r"])
            // Nothing was sent before a person approved.
            expect((yield* sdk(() => server.client.experimental.tasks.listTasks())).tasks).toEqual([])

            const done = yield* within(chat.resume(yield* chat.approve(paused.messages, "r")))
            expect(done.outcome._tag).toBe("Complete")
            expect(statusOf(done.messages, "r")?._tag).toBe("Completed")
            expect(seenByModel(model, "r")).toContain("# Research Report: tide pools")
            expect(model.requests).toHaveLength(2)
            // It ran as one task on the server, to its end.
            const tasks = (yield* sdk(() => server.client.experimental.tasks.listTasks())).tasks
            expect(tasks.map((task) => task.status)).toEqual(["completed"])
          })))

      it.live("an ambiguous query asks the person (input_required, through tasks/result); the answer shapes the report", () =>
        Effect.gen(function*() {
          const inbox = yield* McpElicitation.inbox()
          return yield* withServer(start, { elicitation: inbox.handler }, (server) =>
            Effect.gen(function*() {
              const model = MockLanguageModel.make([
                MockLanguageModel.toolCalls([{ id: "r", name: "simulate-research-query", arguments: { topic: "python", ambiguous: true } }]),
                MockLanguageModel.text("Python, the snake.")
              ])
              const chat = yield* chatCalling(server, model)
              const paused = yield* chat.complete(Messages.fromUser("Research python."))
              expect(approvals(paused)).toEqual(["r"])
              const turn = yield* Effect.forkChild(chat.resume(yield* chat.approve(paused.messages, "r")))

              const request = yield* within(inbox.next)
              expect(request.message).toContain(`"python" could have multiple interpretations`)
              expect(request.calls).toEqual([{ id: "r", name: "simulate-research-query" }])
              const tasks = (yield* sdk(() => server.client.experimental.tasks.listTasks())).tasks
              expect(tasks.map((task) => task.status)).toEqual(["input_required"])
              // Not one of the server's interpretations of "python": refused, still pending.
              const refused = yield* Effect.result(inbox.answer(request.id, McpElicitation.accept({ interpretation: "technical" })))
              expect(Result.isFailure(refused) && refused.failure._tag).toBe("InvalidElicitationAnswer")
              expect((yield* inbox.pending).map((pending) => pending.id)).toEqual([request.id])
              yield* inbox.answer(request.id, McpElicitation.accept({ interpretation: "snake" }))

              const done = yield* within(Fiber.join(turn))
              expect(done.outcome._tag).toBe("Complete")
              expect(seenByModel(model, "r")).toContain("# Research Report: python (snake)")
            }))
        }))
    })

    describe("its elicitation tool", () => {
      const calling = [
        MockLanguageModel.toolCalls([{ id: "e", name: "trigger-elicitation-request" }]),
        MockLanguageModel.text("Noted.")
      ]

      it.live("the request reaches the inbox; answers off the server's schema are refused; an accepted answer reaches the tool and the model", () =>
        Effect.gen(function*() {
          const inbox = yield* McpElicitation.inbox()
          return yield* withServer(start, { elicitation: inbox.handler }, (server) =>
            Effect.gen(function*() {
              const model = MockLanguageModel.make(calling)
              const chat = yield* chatCalling(server, model)
              expect(chat.tools.map((tool) => tool.name)).toContain("trigger-elicitation-request")
              const paused = yield* chat.complete(Messages.fromUser("Sign me up."))
              expect(approvals(paused)).toEqual(["e"])
              const turn = yield* Effect.forkChild(chat.resume(yield* chat.approve(paused.messages, "e")))

              const request = yield* within(inbox.next)
              expect(request).toMatchObject({ server: "mcp-servers/everything", message: "Please provide inputs for the following fields:" })
              expect(request.calls).toEqual([{ id: "e", name: "trigger-elicitation-request" }])
              expect(request.requestedSchema).toMatchObject({ type: "object", required: ["name"] })
              for (
                const bad of [
                  { check: true },
                  { name: "Ada Lovelace", email: "not an address" },
                  { name: "Ada Lovelace", integer: 500 },
                  { name: "Ada Lovelace", untitledSingleSelectEnum: "Gunther" }
                ]
              ) {
                const refused = yield* Effect.result(inbox.answer(request.id, McpElicitation.accept(bad)))
                expect(Result.isFailure(refused) && refused.failure._tag).toBe("InvalidElicitationAnswer")
              }
              expect((yield* inbox.pending).map((pending) => pending.id)).toEqual([request.id])
              yield* inbox.answer(
                request.id,
                McpElicitation.accept({ name: "Ada Lovelace", check: true, email: "ada@example.com", integer: 36, untitledSingleSelectEnum: "Phoebe" })
              )

              const done = yield* within(Fiber.join(turn))
              expect(done.outcome._tag).toBe("Complete")
              expect(statusOf(done.messages, "e")?._tag).toBe("Completed")
              const seen = seenByModel(model, "e")
              for (const line of ["User provided the requested information", "- Name: Ada Lovelace", "- Agreed to terms: true", "- Email: ada@example.com", "- Favorite Integer: 36"]) {
                expect(seen).toContain(line)
              }
              expect(yield* inbox.pending).toEqual([])
            }))
        }))

      it.live("a person declines: the server is told so, and the tool's result says it to the model", () =>
        Effect.gen(function*() {
          const inbox = yield* McpElicitation.inbox()
          return yield* withServer(start, { elicitation: inbox.handler }, (server) =>
            Effect.gen(function*() {
              const model = MockLanguageModel.make(calling)
              const chat = yield* chatCalling(server, model)
              const paused = yield* chat.complete(Messages.fromUser("Sign me up."))
              const turn = yield* Effect.forkChild(chat.resume(yield* chat.approve(paused.messages, "e")))
              const request = yield* within(inbox.next)
              yield* inbox.answer(request.id, McpElicitation.decline)
              const done = yield* within(Fiber.join(turn))
              expect(done.outcome._tag).toBe("Complete")
              const seen = seenByModel(model, "e")
              expect(seen).toContain("User declined to provide the requested information")
              expect(seen).not.toContain("Name:")
            }))
        }))

      /** The request pending in the stored conversation `id`, as a UI reading the store sees it. */
      const storedInputs = (store: ConversationStore.Service, id: string) =>
        Effect.map(store.load(id), (stored) => Option.isSome(stored) ? Messages.pendingInputs(stored.value.messages) : [])

      /** Runs the turn of conversation `id` from the store, saving every state back (as `Worker.resume` does). */
      const resumeStored = (
        chat: McpChat.Service,
        store: ConversationStore.Service,
        id: string,
        decide: (messages: Messages.Messages) => Effect.Effect<Messages.Messages, unknown>
      ) =>
        Effect.gen(function*() {
          const stored = Option.getOrThrow(yield* store.load(id))
          const messages = yield* decide(stored.messages)
          return yield* chat.resume(messages, { checkpoint: ConversationStore.checkpoint(store, id, stored.version) })
        })

      it.live("while a person is asked, the request is in the stored conversation; refused off its schema, then answered; the result reaches the model", () =>
        Effect.gen(function*() {
          const inbox = yield* McpElicitation.inbox()
          const store = yield* ConversationStore.makeMemory
          yield* store.save("signup", Messages.fromUser("Sign me up."))
          return yield* withServer(start, { elicitation: inbox.handler }, (server) =>
            Effect.gen(function*() {
              const model = MockLanguageModel.make(calling)
              const chat = yield* chatCalling(server, model)
              const paused = yield* resumeStored(chat, store, "signup", Effect.succeed)
              expect(approvals(paused)).toEqual(["e"])
              const turn = yield* Effect.forkChild(resumeStored(chat, store, "signup", (messages) => chat.approve(messages, "e")))

              const request = yield* within(inbox.next)
              // The store shows it (the call still Running): server, message, the server's schema, the deadline.
              const [pending] = yield* storedInputs(store, "signup")
              expect(pending?.call.id).toBe("e")
              expect(pending?.call.status._tag).toBe("Running")
              expect(pending?.request).toEqual({
                id: request.id,
                from: "mcp-servers/everything",
                message: "Please provide inputs for the following fields:",
                requestedSchema: request.requestedSchema,
                deadline: request.deadline
              })
              expect(pending?.request.requestedSchema).toMatchObject({ type: "object", required: ["name"] })

              // An answer off the schema: a typed error, nothing sent, still pending (in the inbox and the store).
              const refused = yield* Effect.result(inbox.answer(request.id, McpElicitation.accept({ name: "Ada Lovelace", integer: 500 })))
              expect(Result.isFailure(refused) && refused.failure._tag).toBe("InvalidElicitationAnswer")
              expect((yield* storedInputs(store, "signup")).map((input) => input.request.id)).toEqual([request.id])
              // Corrected: it reaches the tool, and the tool's result the model.
              yield* inbox.answer(request.id, McpElicitation.accept({ name: "Ada Lovelace", integer: 36 }))
              const done = yield* within(Fiber.join(turn))
              expect(done.outcome._tag).toBe("Complete")
              expect(seenByModel(model, "e")).toContain("- Name: Ada Lovelace")
              expect(seenByModel(model, "e")).toContain("- Favorite Integer: 36")
              expect(yield* storedInputs(store, "signup")).toEqual([])
              expect(statusOf(Option.getOrThrow(yield* store.load("signup")).messages, "e")?._tag).toBe("Completed")
            }))
        }))

      it.live("a restart while a person is asked: the stored request is recorded as lost with the connection, the call's outcome unknown, never sent again", () =>
        Effect.gen(function*() {
          const model = MockLanguageModel.make([...calling, MockLanguageModel.text("Your sign-up did not go through; shall I try again?")])
          // The first process: the request waits when it "dies"; only the stored document survives.
          const before = yield* ConversationStore.makeMemory
          yield* before.save("signup", Messages.fromUser("Sign me up."))
          const firstInbox = yield* McpElicitation.inbox()
          const survived = yield* withServer(start, { elicitation: firstInbox.handler }, (server) =>
            Effect.gen(function*() {
              const chat = yield* chatCalling(server, model)
              yield* resumeStored(chat, before, "signup", Effect.succeed)
              const turn = yield* Effect.forkChild(resumeStored(chat, before, "signup", (messages) => chat.approve(messages, "e")))
              yield* within(firstInbox.next)
              const stored = Option.getOrThrow(yield* before.load("signup"))
              yield* Fiber.interrupt(turn)
              return Result.getOrThrow(Messages.toJson(stored.messages))
            }))

          // The next process: a new store holding that document, a new connection, nobody answered.
          const after = yield* ConversationStore.makeMemory
          yield* after.save("signup", yield* Effect.fromResult(Messages.fromJson(survived)))
          const [lost] = yield* storedInputs(after, "signup")
          expect(lost?.call.status._tag).toBe("Running")
          const inbox = yield* McpElicitation.inbox()
          return yield* withServer(start, { elicitation: inbox.handler }, (server) =>
            Effect.gen(function*() {
              const chat = yield* chatCalling(server, model)
              // Were the call sent again, the server would ask again and this turn would wait for a person.
              const done = yield* within(resumeStored(chat, after, "signup", Effect.succeed))
              expect(done.outcome._tag).toBe("Complete")
              const status = statusOf(done.messages, "e")
              expect(status?._tag).toBe("Failed")
              const error = status?._tag === "Failed" ? String(status.error) : ""
              expect(error).toContain(`(${lost!.request.id}, from mcp-servers/everything)`)
              expect(error).toContain("lost with the connection")
              expect(error).toContain("outcome is unknown")
              expect(seenByModel(model, "e")).toContain("lost with the connection")
              expect(yield* inbox.pending).toEqual([])
              expect(yield* storedInputs(after, "signup")).toEqual([])
            }))
        }))
    })

    describe("its sampling tool", () => {
      const prompt = "What is the capital of France?"
      const serverSystemPrompt = "You are a helpful test server."
      /** Whether a request to the model is the server's sampling request (rather than the chat's). */
      const isSampling = (request: { readonly messages: Messages.Messages }) => JSON.stringify(request.messages).includes(serverSystemPrompt)

      it.live("a person approves: the request goes to the chat's model (no tools, tokens as asked), its text back to the tool and the model", () =>
        Effect.gen(function*() {
          const pending = yield* McpSampling.approvals
          const model = MockLanguageModel.make([
            MockLanguageModel.toolCalls([{ id: "s", name: "trigger-sampling-request", arguments: { prompt } }]),
            MockLanguageModel.text("Paris."),
            MockLanguageModel.text("The server's model says Paris.")
          ])
          return yield* withServer(start, { sampling: { model, approve: pending.approve } }, (server) =>
            Effect.gen(function*() {
              const chat = yield* chatCalling(server, model)
              expect(chat.tools.map((tool) => tool.name)).toContain("trigger-sampling-request")
              const paused = yield* chat.complete(Messages.fromUser("Ask the server."))
              expect(approvals(paused)).toEqual(["s"])
              const turn = yield* Effect.forkChild(chat.resume(yield* chat.approve(paused.messages, "s")))

              const request = yield* within(pending.next)
              expect(request).toMatchObject({ server: "mcp-servers/everything", systemPrompt: serverSystemPrompt, maxTokens: 100, temperature: 0.7 })
              expect(request.calls).toEqual([{ id: "s", name: "trigger-sampling-request" }])
              expect(JSON.stringify(request.messages)).toContain(`Resource trigger-sampling-request context: ${prompt}`)
              // Waiting for the person: nothing has reached the model yet.
              expect(model.requests.filter(isSampling)).toHaveLength(0)
              yield* pending.answer(request.id, true)

              const done = yield* within(Fiber.join(turn))
              expect(done.outcome._tag).toBe("Complete")
              expect(model.requests).toHaveLength(3)
              const sampled = model.requests[1]!
              expect(isSampling(sampled)).toBe(true)
              expect(sampled.tools).toEqual([])
              expect(sampled.options.maxTokens).toBe(100)
              expect(statusOf(done.messages, "s")?._tag).toBe("Completed")
              const seen = seenByModel(model, "s")
              expect(seen).toContain("LLM sampling result")
              expect(seen).toContain("Paris.")
            }))
        }))

      it.live("refused, and the model never asked: by default with nobody to approve, and when the person says no", () =>
        Effect.gen(function*() {
          const pending = yield* McpSampling.approvals
          for (const approve of [undefined, pending.approve]) {
            const model = MockLanguageModel.make([
              MockLanguageModel.toolCalls([{ id: "s", name: "trigger-sampling-request", arguments: { prompt } }]),
              MockLanguageModel.text("The server could not ask.")
            ])
            const sampling: McpSampling.Options = approve === undefined ? { model } : { model, approve }
            yield* withServer(start, { sampling }, (server) =>
              Effect.gen(function*() {
                const chat = yield* chatCalling(server, model)
                const paused = yield* chat.complete(Messages.fromUser("Ask the server."))
                const turn = yield* Effect.forkChild(chat.resume(yield* chat.approve(paused.messages, "s")))
                if (approve !== undefined) yield* pending.answer((yield* within(pending.next)).id, false)
                const done = yield* within(Fiber.join(turn))
                expect(done.outcome._tag).toBe("Complete")
                expect(statusOf(done.messages, "s")).toMatchObject({ _tag: "Failed", error: { _tag: "McpToolError" } })
                const seen = seenByModel(model, "s")
                expect(seen).toContain("Sampling request refused")
                expect(seen).toContain(approve === undefined ? "none can be asked" : "the person did not approve")
                expect(model.requests).toHaveLength(2)
                expect(model.requests.filter(isSampling)).toHaveLength(0)
              }))
          }
        }))

      it.live("a strategy decides without a person: Execute goes to the model, Reject is refused with its reason", () =>
        Effect.gen(function*() {
          const model = MockLanguageModel.make([
            MockLanguageModel.toolCalls([
              { id: "fr", name: "trigger-sampling-request", arguments: { prompt } },
              { id: "es", name: "trigger-sampling-request", arguments: { prompt: "What is the capital of Spain?" } }
            ]),
            MockLanguageModel.text("Paris."),
            MockLanguageModel.text("France answered; Spain was refused.")
          ])
          const strategy = (request: McpSampling.Request) =>
            JSON.stringify(request.messages).includes("France") ? Action.Execute() : Action.Reject({ reason: "only questions about France" })
          return yield* withServer(start, { sampling: { model, strategy } }, (server) =>
            Effect.gen(function*() {
              const chat = yield* chatCalling(server, model)
              const paused = yield* chat.complete(Messages.fromUser("Ask the server twice."))
              expect(approvals(paused)).toEqual(["fr", "es"])
              const approved = yield* chat.approve(yield* chat.approve(paused.messages, "fr"), "es")
              const done = yield* within(chat.resume(approved))
              expect(done.outcome._tag).toBe("Complete")
              expect(model.requests.filter(isSampling)).toHaveLength(1)
              expect(JSON.stringify(model.requests[1]!.messages)).toContain("France")
              expect(statusOf(done.messages, "fr")?._tag).toBe("Completed")
              expect(seenByModel(model, "fr")).toContain("Paris.")
              expect(statusOf(done.messages, "es")?._tag).toBe("Failed")
              expect(seenByModel(model, "es")).toContain("only questions about France")
            }))
        }))
    })
  })
}
