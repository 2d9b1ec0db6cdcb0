/**
 * The server's own requests while a tool runs: elicitation (a person answers a pending request, typed
 * by the server's schema, with a deadline) and sampling (the chat's model, under a strategy, a person
 * approving; fail closed). The server is a real process (support/everything.mjs, with the reference
 * "everything" server's tool shapes), over stdio and Streamable HTTP; every wait is bounded.
 */
import { Action, Messages } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Result, Schedule, Stream } from "effect"
import { McpChat, McpElicitation, McpSampling, McpToolkit } from "../src/index.js"
import { everythingTransports } from "./support/servers.js"


interface Counts {
  readonly elicited: ReadonlyArray<{ readonly action: string; readonly content?: Record<string, unknown> }>
  readonly sampled: ReadonlyArray<unknown>
  /** The flood's answers, as they reached the server. */
  readonly flooded: ReadonlyArray<string>
}
const counts = (server: McpToolkit.Service) =>
  Effect.map(server.call("stats", {}), (result) => JSON.parse((result.content[0] as { text: string }).text) as Counts)

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) => (result.content[0] as { text: string }).text

/** Bounds a wait on a person's side of the test. */
const within = <A, E>(effect: Effect.Effect<A, E>) =>
  effect.pipe(Effect.timeoutOrElse({ duration: "15 seconds", orElse: () => Effect.die(new Error("nothing arrived")) }))

const names = (server: McpToolkit.Service) => Effect.map(server.current, (snapshot) => snapshot.toolkit.list.map((tool) => tool.name))

for (const [name, transport] of everythingTransports) {
  describe(`elicitation (${name})`, () => {
    it.live("without a handler the client declares neither capability, and the server hides the tools that need them", () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport })
        const listed = yield* names(server)
        expect(listed).not.toContain("trigger-elicitation-request")
        expect(listed).not.toContain("trigger-sampling-request")
        expect(server.client.getServerCapabilities()).toBeDefined()
      }).pipe(Effect.scoped))

    it.live("a request waits for a person: an answer off the schema is refused (still pending), a good one reaches the server", () =>
      Effect.gen(function*() {
        const inbox = yield* McpElicitation.inbox()
        const server = yield* McpToolkit.make({ transport: yield* transport, elicitation: inbox.handler })
        expect(yield* names(server)).toContain("trigger-elicitation-request")
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "e", name: "trigger-elicitation-request" }]),
          MockLanguageModel.text("Thanks, Ada.")
        ])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
        // The tool call that triggered it waits while the request is pending.
        const turn = yield* Effect.forkChild(chat.complete(Messages.fromUser("Who am I?")))
        const request = yield* within(inbox.next)
        expect(request).toMatchObject({ server: "everything-standin", message: "Please tell us about you." })
        // The call that is waiting for it (the only one running on this server).
        expect(request.calls).toEqual([{ id: "e", name: "trigger-elicitation-request" }])
        expect(request.deadline).toBeGreaterThan(Date.now())
        expect((yield* inbox.pending).map((pending) => pending.id)).toEqual([request.id])
        for (const bad of [{ age: 36 }, { name: "Ada", age: "old" }, { name: "", age: 36 }]) {
          const refused = yield* Effect.result(inbox.answer(request.id, McpElicitation.accept(bad)))
          expect(Result.isFailure(refused) && refused.failure._tag).toBe("InvalidElicitationAnswer")
        }
        expect((yield* inbox.pending).map((pending) => pending.id)).toEqual([request.id])
        yield* inbox.answer(request.id, McpElicitation.accept({ name: "Ada", age: 36 }))
        const result = yield* within(Fiber.join(turn))
        expect(result.outcome._tag).toBe("Complete")
        const status = Messages.findTool(result.messages, "e")?.status
        expect(status?._tag).toBe("Completed")
        expect(JSON.stringify(status)).toContain(`"name\\":\\"Ada\\"`)
        expect((yield* counts(server)).elicited).toEqual([{ action: "accept", content: { name: "Ada", age: 36 } }])
        // Answered, it is gone: a second answer is refused.
        const again = yield* Effect.result(inbox.answer(request.id, McpElicitation.decline))
        expect(Result.isFailure(again) && again.failure._tag).toBe("RequestNotPending")
      }).pipe(Effect.scoped))

    it.live("nobody answers before the deadline: the server is told cancel, and the request is no longer pending", () =>
      Effect.gen(function*() {
        const inbox = yield* McpElicitation.inbox()
        const server = yield* McpToolkit.make({ transport: yield* transport, elicitation: inbox.handler, elicitationTimeout: Duration.millis(200) })
        const result = yield* server.call("trigger-elicitation-request", {})
        expect(textOf(result)).toContain(`"action":"cancel"`)
        expect(yield* inbox.pending).toEqual([])
      }).pipe(Effect.scoped))

    it.live("in a chat, the deadline's cancel ends the stored request: the stream shows it asked and settled, the last checkpoint holds none", () =>
      Effect.gen(function*() {
        const inbox = yield* McpElicitation.inbox()
        const server = yield* McpToolkit.make({ transport: yield* transport, elicitation: inbox.handler, elicitationTimeout: Duration.millis(200) })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "e", name: "trigger-elicitation-request" }]),
          MockLanguageModel.text("Nobody answered.")
        ])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
        const saved: Array<Messages.Messages> = []
        const events = yield* within(Stream.runCollect(chat.stream(Messages.fromUser("Who am I?"), {
          checkpoint: (messages) => Effect.sync(() => saved.push(messages))
        })))
        const inputs = events.filter((event) => event._tag === "InputRequested" || event._tag === "InputSettled")
        expect(inputs.map((event) => event._tag)).toEqual(["InputRequested", "InputSettled"])
        const requested = inputs[0]!
        expect(requested._tag === "InputRequested" && requested.request).toMatchObject({ from: "everything-standin", message: "Please tell us about you." })
        expect(saved.some((messages) => Messages.pendingInputs(messages).length === 1)).toBe(true)
        expect(Messages.pendingInputs(saved[saved.length - 1]!)).toEqual([])
        expect(textOf((Messages.findTool(saved[saved.length - 1]!, "e")?.status as { result: { content: ReadonlyArray<unknown> } }).result)).toContain(`"action":"cancel"`)
      }).pipe(Effect.scoped))

    it.live(`a flood: past ${McpToolkit.maxPendingElicitations} waiting requests, and for a huge message, the server is told cancel without asking anyone`, () =>
      Effect.gen(function*() {
        const inbox = yield* McpElicitation.inbox()
        const server = yield* McpToolkit.make({ transport: yield* transport, elicitation: inbox.handler })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "f", name: "flood-elicitations", arguments: { count: McpToolkit.maxPendingElicitations + 3 } }]),
          MockLanguageModel.text("Done.")
        ])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
        const saved: Array<Messages.Messages> = []
        const turn = yield* Effect.forkChild(chat.complete(Messages.fromUser("Flood."), {
          checkpoint: (messages) => Effect.sync(() => saved.push(messages))
        }))
        const asked = []
        for (let i = 0; i < McpToolkit.maxPendingElicitations; i++) asked.push(yield* within(inbox.next))
        // The rest were cancelled at once: wait until the server has all three answers (they may still be
        // on their way in when the eighth is asked), so answering the eight cannot let a late one in.
        const cancelled = counts(server).pipe(
          Effect.map(({ flooded }) => flooded.filter((action) => action === "cancel").length),
          Effect.repeat({ until: (n) => n >= 3, schedule: Schedule.spaced("20 millis") })
        )
        expect(yield* within(cancelled)).toBe(3)
        // As many as the limit wait (in the inbox and on the call).
        expect(yield* inbox.pending).toHaveLength(McpToolkit.maxPendingElicitations)
        expect(Math.max(...saved.map((messages) => Messages.pendingInputs(messages).length))).toBe(McpToolkit.maxPendingElicitations)
        for (const request of asked) yield* inbox.answer(request.id, McpElicitation.decline)
        const result = yield* within(Fiber.join(turn))
        const status = Messages.findTool(result.messages, "f")?.status
        const actions = JSON.parse(textOf((status as { result: { content: ReadonlyArray<unknown> } }).result)) as Array<string>
        expect(actions.filter((action) => action === "decline")).toHaveLength(McpToolkit.maxPendingElicitations)
        expect(actions.filter((action) => action === "cancel")).toHaveLength(3)
        expect(Messages.pendingInputs(result.messages)).toEqual([])

        // A message too long to show: cancelled, nobody asked.
        const huge = yield* server.call("flood-elicitations", { count: 1, messageLength: McpToolkit.maxElicitationMessage + 1 })
        expect(JSON.parse(textOf(huge))).toEqual(["cancel"])
        expect(yield* inbox.pending).toEqual([])
      }).pipe(Effect.scoped))

    it.live("a task that needs input (input_required): the elicitation arrives through tasks/result and the task finishes", () =>
      Effect.gen(function*() {
        const inbox = yield* McpElicitation.inbox()
        const server = yield* McpToolkit.make({ transport: yield* transport, elicitation: inbox.handler })
        const call = yield* Effect.forkChild(server.call("simulate-research-query", { topic: "python", ambiguous: true, stageMs: 20 }))
        const request = yield* within(inbox.next)
        expect(request.message).toBe(`Which "python" do you mean?`)
        yield* inbox.answer(request.id, McpElicitation.accept({ interpretation: "technical" }))
        const result = yield* within(Fiber.join(call))
        expect(textOf(result)).toBe("# Research Report: python (technical)")
      }).pipe(Effect.scoped))
  })

  describe(`sampling (${name})`, () => {
    const prompt = { prompt: "What is the capital of France?", maxTokens: 5000 }

    it.live("by default a person must approve: with nobody to ask, the request is refused and the model never called", () =>
      Effect.gen(function*() {
        const model = MockLanguageModel.make([MockLanguageModel.text("Paris.")])
        const server = yield* McpToolkit.make({ transport: yield* transport, sampling: { model } })
        expect(yield* names(server)).toContain("trigger-sampling-request")
        const result = yield* Effect.result(server.call("trigger-sampling-request", prompt))
        expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "McpToolError", text: expect.stringContaining("refused") })
        expect(model.requests).toHaveLength(0)
        expect((yield* counts(server)).sampled).toEqual([])
      }).pipe(Effect.scoped))

    it.live("a person approves: the chat's model answers (tokens capped), the server gets its text; a refusal never reaches the model", () =>
      Effect.gen(function*() {
        const model = MockLanguageModel.make([MockLanguageModel.text("Paris.")])
        const asked: Array<McpSampling.Request> = []
        let yes = true
        const server = yield* McpToolkit.make({
          transport: yield* transport,
          sampling: { model, approve: (request) => Effect.sync(() => (asked.push(request), yes)), maxTokens: 256 }
        })
        const result = yield* server.call("trigger-sampling-request", prompt)
        expect(textOf(result)).toContain("Paris.")
        expect(asked).toHaveLength(1)
        expect(asked[0]).toMatchObject({ server: "everything-standin", systemPrompt: "You are a helpful test server.", maxTokens: 5000 })
        expect(model.requests).toHaveLength(1)
        expect(model.requests[0]!.options.maxTokens).toBe(256)
        expect(model.requests[0]!.tools).toEqual([])
        expect(JSON.stringify(model.requests[0]!.messages)).toContain("What is the capital of France?")
        yes = false
        const refused = yield* Effect.result(server.call("trigger-sampling-request", prompt))
        expect(Result.isFailure(refused) && refused.failure._tag).toBe("McpToolError")
        expect(model.requests).toHaveLength(1)
      }).pipe(Effect.scoped))

    it.live("approvals: the request waits as a pending item until a person answers; past approvalTimeout it is refused", () =>
      Effect.gen(function*() {
        const model = MockLanguageModel.make([MockLanguageModel.text("Paris.")])
        const pending = yield* McpSampling.approvals
        const server = yield* McpToolkit.make({
          transport: yield* transport,
          sampling: { model, approve: pending.approve, approvalTimeout: Duration.seconds(10) }
        })
        const call = yield* Effect.forkChild(server.call("trigger-sampling-request", prompt))
        const request = yield* within(pending.next)
        expect(JSON.stringify(request.messages)).toContain("What is the capital of France?")
        expect((yield* pending.pending).map((item) => item.id)).toEqual([request.id])
        expect(model.requests).toHaveLength(0)
        yield* pending.answer(request.id, true)
        expect(textOf(yield* within(Fiber.join(call)))).toContain("Paris.")
        expect(yield* pending.pending).toEqual([])
        const again = yield* Effect.result(pending.answer(request.id, false))
        expect(Result.isFailure(again) && again.failure._tag).toBe("RequestNotPending")

        const short = yield* McpToolkit.make({
          transport: yield* transport,
          sampling: { model, approve: pending.approve, approvalTimeout: Duration.millis(200) }
        })
        const late = yield* Effect.result(short.call("trigger-sampling-request", prompt))
        expect(Result.isFailure(late) && late.failure).toMatchObject({ _tag: "McpToolError", text: expect.stringContaining("did not approve") })
        expect(yield* pending.pending).toEqual([])
        expect(model.requests).toHaveLength(1)
      }).pipe(Effect.scoped))

    it.live("a strategy decides: Execute runs without asking, Reject refuses with its reason", () =>
      Effect.gen(function*() {
        const model = MockLanguageModel.make([MockLanguageModel.text("Paris.")])
        const server = yield* McpToolkit.make({
          transport: yield* transport,
          sampling: {
            model,
            strategy: (request) =>
              JSON.stringify(request.messages).includes("France") ? Action.Execute() : Action.Reject({ reason: "only about France" })
          }
        })
        expect(textOf(yield* server.call("trigger-sampling-request", prompt))).toContain("Paris.")
        const refused = yield* Effect.result(server.call("trigger-sampling-request", { prompt: "Spain?" }))
        expect(Result.isFailure(refused) && refused.failure).toMatchObject({ text: expect.stringContaining("only about France") })
        expect(model.requests).toHaveLength(1)
      }).pipe(Effect.scoped))
  })
}
