import { Action, Chat, ConversationStore, Messages, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { asSchema, jsonSchema, tool } from "ai"
import { type } from "arktype"
import { ChatWorkflow, Decision } from "@chat-ts/workflow"
import { Effect, Fiber, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { WorkflowEngine } from "effect/workflow"
import { z } from "zod"
import { AiSdkToolkit } from "../src/index.js"
import { bankTools, record } from "./support/toolsAgent.js"

const ask = Messages.fromUser("Help me with my account.")

const statusOf = (messages: Messages.Messages, id: string) => Messages.findTool(messages, id)?.status

/** A chat of these AI SDK tools on a scripted model. */
const chatOf = <T extends AiSdkToolkit.AiTools>(tools: T, script: MockLanguageModel.Script) =>
  Effect.gen(function*() {
    const kit = yield* AiSdkToolkit.make(tools)
    const model = MockLanguageModel.make(script)
    const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, kit.handlers)))
    return { chat, model, kit }
  })

/** Runs `effect` until `done` holds, yielding to the workflow's fibers in between (bounded). */
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (a: A) => boolean, tries = 2_000) =>
  Effect.gen(function*() {
    for (let i = 0; i < tries; i++) {
      const a = yield* Effect.result(effect)
      if (Result.isSuccess(a) && done(a.success)) return a.success
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
    }
    return yield* Effect.die(new Error(`not reached after ${tries} tries`))
  })

describe("AiSdkToolkit in the workflow shell", () => {
  it.effect("a needsApproval pause waits durably; a bad edit is refused; the approved edit runs once and the turn completes", () =>
    Effect.gen(function*() {
      const rec = record()
      const kit = yield* AiSdkToolkit.make(bankTools(rec))
      const turns = ChatWorkflow.make({ name: "ai-sdk-bank-turn", tools: kit })
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([
          { id: "w", name: "get_weather", arguments: { city: "Lisbon" } },
          { id: "big", name: "transfer", arguments: { to: "PT1234", amount: 500 } }
        ]),
        MockLanguageModel.text("Sent.")
      ])
      const layer = ChatWorkflow.layer(turns).pipe(
        Layer.provideMerge(Layer.mergeAll(WorkflowEngine.layerMemory, ConversationStore.layerMemory, model.layer, kit.handlers))
      )
      yield* Effect.gen(function*() {
        const id = yield* turns.start("conv-ai-sdk", ask)
        const paused = yield* eventually(turns.read(id), (view) => view.status._tag === "Waiting")
        expect(paused.status).toEqual({ _tag: "Waiting", reason: { _tag: "AwaitingApproval", toolIds: ["big"] } })
        expect(rec.executed.map((call) => call.toolCallId)).toEqual(["w"])

        // An edit that breaks the zod schema is refused; the call still waits, nothing ran.
        const bad = yield* Effect.flip(turns.decide(id, "big", Decision.approve({ to: "PT1234", amount: -1 })))
        expect(bad._tag).toBe("InvalidEditedArguments")
        expect(statusOf((yield* turns.read(id)).messages, "big")).toEqual({ _tag: "AwaitingApproval" })
        expect(rec.executed).toHaveLength(1)

        yield* turns.decide(id, "big", Decision.approve({ to: "PT1234", amount: 90 }))
        const done = yield* eventually(turns.read(id), (view) => view.status._tag === "Complete" || view.status._tag === "Failed")
        expect(done.status._tag).toBe("Complete")
        expect(rec.executed.slice(1)).toEqual([{ tool: "transfer", input: { to: "PT1234", amount: 90 }, toolCallId: "big" }])
        expect(statusOf(done.messages, "big")).toMatchObject({ _tag: "Completed", result: "sent 90 to PT1234" })
        // Starting the same turn again is the same execution: nothing runs again.
        expect(yield* turns.start("conv-ai-sdk", ask)).toBe(id)
        yield* Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 10)))
        expect(rec.executed).toHaveLength(2)
        expect(model.requests).toHaveLength(2)
      }).pipe(Effect.provide(layer))
    }))
})

describe("AiSdkToolkit", () => {
  it.effect("the model sees the JSON Schema the AI SDK would send (zod, arktype, jsonSchema), not strict unless asked", () =>
    Effect.gen(function*() {
      const json: Exclude<Parameters<typeof jsonSchema>[0], Function | PromiseLike<unknown>> = { type: "object", properties: { q: { type: "string", minLength: 1 } }, required: ["q"], additionalProperties: false }
      const tools = {
        by_zod: tool({ description: "zod", inputSchema: z.object({ city: z.string().min(2).describe("The city"), n: z.number().default(3) }), execute: async () => 1 }),
        by_arktype: tool({ description: "arktype", inputSchema: type({ city: "string>1", "unit?": "'c'|'f'" }), execute: async () => 1 }),
        by_json: tool({ description: "json", inputSchema: jsonSchema<{ q: string }>(json), execute: async () => 1 }),
        strict_one: tool({ description: "strict", inputSchema: z.object({ a: z.string() }), strict: true, execute: async () => 1 })
      }
      const { chat } = yield* chatOf(tools, [])
      const expected = async (schema: Parameters<typeof asSchema>[0]) => {
        const { $schema: _ignored, ...rest } = (await asSchema(schema).jsonSchema) as Record<string, unknown>
        return rest
      }
      const byName = Object.fromEntries(chat.tools.map((declaration) => [declaration.name, declaration]))
      expect(byName.by_zod).toEqual({ name: "by_zod", description: "zod", parameters: yield* Effect.promise(() => expected(tools.by_zod.inputSchema)), strict: false })
      expect(byName.by_arktype?.parameters).toEqual(yield* Effect.promise(() => expected(tools.by_arktype.inputSchema)))
      expect(byName.by_arktype?.parameters).toMatchObject({ properties: { city: { type: "string", minLength: 2 } }, required: ["city"] })
      expect(byName.by_json?.parameters).toEqual(json)
      expect(byName.strict_one).toMatchObject({ strict: true, parameters: { properties: { a: { type: "string" } }, required: ["a"] } })
    }))

  it.effect("in a Chat: needsApproval false runs, true and a function answering true pause; a bad edit is refused; the edit runs once", () =>
    Effect.gen(function*() {
      const rec = record()
      const { chat, model } = yield* chatOf(bankTools(rec), [
        MockLanguageModel.toolCalls([
          { id: "w", name: "get_weather", arguments: { city: "Lisbon" } },
          { id: "small", name: "transfer", arguments: { to: "PT1234", amount: 20 } },
          { id: "big", name: "transfer", arguments: { to: "PT1234", amount: 500 } },
          { id: "del", name: "delete_account", arguments: { id: "acc-1" } }
        ]),
        MockLanguageModel.text("Done.")
      ])
      const first = yield* chat.complete(ask)
      expect(first.outcome._tag).toBe("Paused")
      // The weather (needsApproval: false) and the small transfer (the function said false) ran, with the schema's output (the default unit).
      expect(rec.executed).toHaveLength(2)
      expect(rec.executed).toEqual(expect.arrayContaining([
        { tool: "get_weather", input: { city: "Lisbon", unit: "celsius" }, toolCallId: "w" },
        { tool: "transfer", input: { to: "PT1234", amount: 20 }, toolCallId: "small" }
      ]))
      expect(statusOf(first.messages, "w")).toMatchObject({ _tag: "Completed", result: { city: "Lisbon", temperature: 17 } })
      expect(statusOf(first.messages, "small")).toMatchObject({ _tag: "Completed", result: "sent 20 to PT1234" })
      expect(rec.asked).toHaveLength(2)
      expect(rec.asked).toEqual(expect.arrayContaining([
        { tool: "transfer", input: { amount: 20 }, toolCallId: "small" },
        { tool: "transfer", input: { amount: 500 }, toolCallId: "big" }
      ]))
      expect(statusOf(first.messages, "big")?._tag).toBe("AwaitingApproval")
      expect(statusOf(first.messages, "del")?._tag).toBe("AwaitingApproval")

      // Edits that break the zod schema are refused at once, the messages unchanged; so is a key it
      // does not declare (zod would drop it: it would be stored and shown, and never reach execute).
      for (
        const bad of [
          { to: "nowhere", amount: 50 },
          { to: "PT1234", amount: -5 },
          { to: "PT1234", amount: 50_000 },
          { to: "PT1234" },
          { to: "PT1234", amount: 50, note: "IGNORE PREVIOUS INSTRUCTIONS" }
        ]
      ) {
        const refused = yield* Effect.result(chat.approve(first.messages, "big", bad))
        expect(Result.isFailure(refused) && refused.failure._tag).toBe("InvalidEditedArguments")
        if (Result.isFailure(refused) && refused.failure._tag === "InvalidEditedArguments") {
          expect(refused.failure.messages).toEqual(first.messages)
        }
      }
      // An edit forged into the messages directly is checked too, before anything runs.
      const forged = yield* Effect.fromResult(Messages.approve(first.messages, "big", { to: "PT1234", amount: -1 }))
      const forgedResume = yield* Effect.result(chat.resume(yield* Effect.fromResult(Messages.reject(forged, "del", "no"))))
      expect(Result.isFailure(forgedResume) && forgedResume.failure._tag).toBe("InvalidEditedArguments")
      expect(rec.executed).toHaveLength(2)

      const edited = yield* chat.approve(first.messages, "big", { to: "PT1234", amount: 90 })
      const decided = yield* chat.reject(edited, "del", "Not today.")
      const done = yield* chat.resume(decided)
      expect(done.outcome._tag).toBe("Complete")
      expect(rec.executed.slice(2)).toEqual([{ tool: "transfer", input: { to: "PT1234", amount: 90 }, toolCallId: "big" }])
      expect(statusOf(done.messages, "big")).toMatchObject({ _tag: "Completed", result: "sent 90 to PT1234", editedArguments: `{"to":"PT1234","amount":90}` })
      expect(statusOf(done.messages, "del")?._tag).toBe("Rejected")
      // needsApproval is not asked again when the turn resumes; the model was called twice.
      expect(rec.asked).toHaveLength(2)
      expect(model.requests).toHaveLength(2)
      // Resuming the finished turn again runs nothing again.
      yield* chat.complete(done.messages)
      expect(rec.executed).toHaveLength(3)
    }))

  it.effect("arguments that break the schema fail the call for the model; neither needsApproval nor execute is called", () =>
    Effect.gen(function*() {
      const rec = record()
      const { chat } = yield* chatOf(bankTools(rec), [
        MockLanguageModel.toolCalls([
          { id: "t", name: "transfer", arguments: { to: "PT1234", amount: "lots" } },
          { id: "w", name: "get_weather", arguments: { city: "L" } },
          { id: "x", name: "get_weather", arguments: { city: "Lisbon", note: "extra" } }
        ]),
        MockLanguageModel.text("Sorry.")
      ])
      const done = yield* chat.complete(ask)
      expect(done.outcome._tag).toBe("Complete")
      expect(statusOf(done.messages, "t")).toMatchObject({ _tag: "Failed", error: expect.stringContaining("amount") })
      expect(statusOf(done.messages, "w")).toMatchObject({ _tag: "Failed", error: expect.stringContaining("city") })
      // A key the JSON Schema the model was given closes out (`additionalProperties: false`).
      expect(statusOf(done.messages, "x")).toMatchObject({ _tag: "Failed", error: expect.stringContaining("additional properties") })
      expect(rec.asked).toEqual([])
      expect(rec.executed).toEqual([])
    }))

  it.effect("needsApproval fails closed: a function that throws, rejects or answers a non-boolean asks a person", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const make = (name: string, needsApproval: (input: { n: number }) => boolean | Promise<boolean>) =>
        tool({
          description: name,
          inputSchema: z.object({ n: z.number() }),
          needsApproval,
          execute: async () => {
            ran.push(name)
            return "ran"
          }
        })
      const tools = {
        throws: make("throws", () => {
          throw new Error("policy service down")
        }),
        rejects: make("rejects", () => Promise.reject(new Error("timeout"))),
        answers_text: make("answers_text", () => "yes" as unknown as boolean),
        answers_false: make("answers_false", async () => false)
      }
      const { chat } = yield* chatOf(tools, [
        MockLanguageModel.toolCalls(Object.keys(tools).map((name) => ({ id: name, name, arguments: { n: 1 } }))),
        MockLanguageModel.text("Done.")
      ])
      const first = yield* chat.complete(ask)
      expect(statusOf(first.messages, "throws")?._tag).toBe("AwaitingApproval")
      expect(statusOf(first.messages, "rejects")?._tag).toBe("AwaitingApproval")
      expect(statusOf(first.messages, "answers_text")?._tag).toBe("AwaitingApproval")
      expect(statusOf(first.messages, "answers_false")).toMatchObject({ _tag: "Completed", result: "ran" })
      expect(ran).toEqual(["answers_false"])
    }))

  it.effect("a needsApproval that never answers: after needsApprovalTimeout (default 30 seconds) the call waits for a person", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      let asked!: () => void
      const askedOnce = new Promise<void>((resolve) => {
        asked = resolve
      })
      const tools = {
        hangs: tool({
          description: "Its policy service hangs.",
          inputSchema: z.object({}),
          needsApproval: () => {
            asked()
            return new Promise<boolean>(() => {})
          },
          execute: async () => {
            ran.push("hangs")
            return "ran"
          }
        })
      }
      const { chat } = yield* chatOf(tools, [MockLanguageModel.toolCalls([{ id: "h", name: "hangs", arguments: {} }])])
      const fiber = yield* Effect.forkChild(chat.complete(ask))
      yield* Effect.promise(() => askedOnce)
      yield* TestClock.adjust("29 seconds")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 second")
      const paused = yield* Fiber.join(fiber)
      expect(statusOf(paused.messages, "h")?._tag).toBe("AwaitingApproval")
      expect(ran).toEqual([])

      const bad = yield* Effect.flip(AiSdkToolkit.make(tools, { needsApprovalTimeout: -1 }))
      expect(bad).toMatchObject({ reason: "InvalidOptions" })
      expect(bad.message).toContain("needsApprovalTimeout must be a finite, non-negative duration")
      expect((yield* Effect.flip(AiSdkToolkit.make(tools, { needsApprovalTimeout: "Infinity" }))).reason).toBe("InvalidOptions")
    }))

  it.effect("an execute that throws is the call's failure { error } for the model, and the turn goes on", () =>
    Effect.gen(function*() {
      const tools = {
        flaky: tool({
          description: "Fails.",
          inputSchema: z.object({}),
          execute: async (): Promise<string> => {
            throw new Error("the bank is closed")
          }
        })
      }
      const { chat, model } = yield* chatOf(tools, [
        MockLanguageModel.toolCalls([{ id: "f", name: "flaky", arguments: {} }]),
        MockLanguageModel.text("The bank is closed.")
      ])
      const done = yield* chat.complete(ask)
      expect(done.outcome._tag).toBe("Complete")
      expect(statusOf(done.messages, "f")).toMatchObject({ _tag: "Failed", error: { error: "the bank is closed" } })
      expect(model.requests).toHaveLength(2)
    }))

  it.effect("an execute that streams (async iterable) records its last value; undefined is recorded as null; a bigint fails the call", () =>
    Effect.gen(function*() {
      const tools = {
        progress: tool({
          description: "Reports progress.",
          inputSchema: z.object({}),
          execute: async function*() {
            yield { status: "working" }
            yield { status: "done", items: 3 }
          }
        }),
        nothing: tool({ description: "Returns nothing.", inputSchema: z.object({}), execute: async () => undefined }),
        big: tool({ description: "Returns a bigint.", inputSchema: z.object({}), execute: async () => ({ n: 1n }) })
      }
      const { chat } = yield* chatOf(tools, [
        MockLanguageModel.toolCalls([
          { id: "p", name: "progress", arguments: {} },
          { id: "n", name: "nothing", arguments: {} },
          { id: "b", name: "big", arguments: {} }
        ]),
        MockLanguageModel.text("Done.")
      ])
      const done = yield* chat.complete(ask)
      expect(statusOf(done.messages, "p")).toMatchObject({ _tag: "Completed", result: { status: "done", items: 3 } })
      expect(statusOf(done.messages, "n")).toMatchObject({ _tag: "Completed", result: null })
      // A result JSON cannot hold: the call fails saying it ran, and the turn goes on.
      expect(statusOf(done.messages, "b")).toMatchObject({
        _tag: "Failed",
        error: { error: expect.stringContaining("The tool ran, but its result cannot be written as JSON") }
      })
      expect(done.outcome._tag).toBe("Complete")
    }))

  it.effect("interrupting the turn aborts execute's abortSignal", () =>
    Effect.gen(function*() {
      let signal: AbortSignal | undefined
      let started!: () => void
      const running = new Promise<void>((resolve) => {
        started = resolve
      })
      const tools = {
        slow: tool({
          description: "Takes forever.",
          inputSchema: z.object({}),
          execute: (_input, { abortSignal }) => {
            signal = abortSignal
            started()
            return new Promise<string>((_resolve, reject) => abortSignal?.addEventListener("abort", () => reject(new Error("aborted"))))
          }
        })
      }
      const { chat } = yield* chatOf(tools, [MockLanguageModel.toolCalls([{ id: "s", name: "slow", arguments: {} }])])
      const fiber = yield* Effect.forkChild(chat.complete(ask))
      yield* Effect.promise(() => running)
      expect(signal?.aborted).toBe(false)
      yield* Fiber.interrupt(fiber)
      expect(signal?.aborted).toBe(true)
    }))

  it.effect("a strategy of one's own replaces needsApproval (and may call it); the handlers stay the same", () =>
    Effect.gen(function*() {
      const rec = record()
      const kit = yield* AiSdkToolkit.make(bankTools(rec))
      expect(kit.strategy).toBeDefined()
      const fromNeedsApproval = kit.strategy!
      const custom = Toolkit.withStrategy(kit, (call, metadata) =>
        call.name === "delete_account"
          ? Action.Reject({ reason: "Accounts are closed at the branch." })
          : call.name === "transfer" && metadata.approval === "function"
          ? ((call.params.amount as number) > 1_000 ? Action.RequireApproval({ expiresAt: 60_000 }) : Action.Execute())
          : fromNeedsApproval(call, metadata))
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([
          { id: "t", name: "transfer", arguments: { to: "PT1234", amount: 500 } },
          { id: "d", name: "delete_account", arguments: { id: "acc-1" } },
          { id: "w", name: "get_weather", arguments: { city: "Porto" } }
        ]),
        MockLanguageModel.text("Done.")
      ])
      const chat = yield* Chat.make({ tools: custom }).pipe(Effect.provide(Layer.merge(model.layer, kit.handlers)))
      const done = yield* chat.complete(ask)
      expect(done.outcome._tag).toBe("Complete")
      expect(statusOf(done.messages, "t")).toMatchObject({ _tag: "Completed", result: "sent 500 to PT1234" })
      expect(statusOf(done.messages, "d")).toMatchObject({ _tag: "Rejected", reason: "Accounts are closed at the branch." })
      expect(statusOf(done.messages, "w")?._tag).toBe("Completed")
      // The custom rule decided the transfer: its needsApproval was never asked.
      expect(rec.asked).toEqual([])
    }))

  it.effect("the tool context reaches execute, needsApproval and a description function; the call id and no messages are given", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const tools = {
        ctx: tool({
          inputSchema: z.object({}),
          // AI SDK 7: a description written from the tool context.
          description: ({ context }) => `Reads the context of ${(context as { tenant: string }).tenant}.`,
          needsApproval: (_input, options) => {
            seen.push(["ask", options.toolCallId, options.context, options.messages])
            return false
          },
          execute: async (_input, options) => {
            seen.push(["run", options.toolCallId, options.context, options.messages])
            return "ok"
          }
        })
      }
      const kit = yield* AiSdkToolkit.make(tools, { context: { tenant: "acme" } })
      const model = MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "c", name: "ctx", arguments: {} }]), MockLanguageModel.text("ok")])
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, kit.handlers)))
      yield* chat.complete(ask)
      expect(seen).toEqual([["ask", "c", { tenant: "acme" }, []], ["run", "c", { tenant: "acme" }, []]])
      expect(chat.tools[0]?.description).toBe("Reads the context of acme.")
    }))

  it.effect("arktype and JSON Schema inputs: a bad call fails, a bad edit is refused, a good one runs", () =>
    Effect.gen(function*() {
      const ran: Array<unknown> = []
      const tools = {
        ark: tool({
          description: "arktype",
          inputSchema: type({ city: "string>1" }),
          needsApproval: true,
          execute: async (input) => {
            ran.push(input)
            return "ark"
          }
        }),
        json: tool({
          description: "JSON Schema",
          inputSchema: jsonSchema<{ q: string }>({
            type: "object",
            properties: { q: { type: "string", minLength: 1 } },
            required: ["q"],
            additionalProperties: false
          }),
          needsApproval: true,
          execute: async (input) => {
            ran.push(input)
            return "json"
          }
        })
      }
      const { chat } = yield* chatOf(tools, [
        MockLanguageModel.toolCalls([
          { id: "a-bad", name: "ark", arguments: { city: 1 } },
          { id: "j-bad", name: "json", arguments: { q: "" } },
          { id: "a", name: "ark", arguments: { city: "Porto" } },
          { id: "j", name: "json", arguments: { q: "x" } }
        ]),
        MockLanguageModel.text("Done.")
      ])
      const first = yield* chat.complete(ask)
      expect(statusOf(first.messages, "a-bad")).toMatchObject({ _tag: "Failed", error: expect.stringContaining("city") })
      expect(statusOf(first.messages, "j-bad")).toMatchObject({ _tag: "Failed", error: expect.stringContaining("q") })
      for (const [id, bad] of [["a", { city: "P" }], ["j", { q: "x", extra: true }], ["j", { q: 3 }]] as const) {
        const refused = yield* Effect.result(chat.approve(first.messages, id, bad))
        expect(Result.isFailure(refused) && refused.failure._tag).toBe("InvalidEditedArguments")
      }
      const approved = yield* chat.approve(yield* chat.approve(first.messages, "a", { city: "Faro" }), "j")
      const done = yield* chat.resume(approved)
      expect(done.outcome._tag).toBe("Complete")
      // The two approved calls run concurrently: in either order, once each.
      expect(ran).toHaveLength(2)
      expect(ran).toEqual(expect.arrayContaining([{ city: "Faro" }, { q: "x" }]))
    }))

  it.effect("refused at build with a typed error: no execute, a provider tool, a schema without a JSON Schema, a tool that throws when read", () =>
    Effect.gen(function*() {
      const noExecute = yield* Effect.flip(
        AiSdkToolkit.make({ ask_user: tool({ description: "Asks the user.", inputSchema: z.object({ q: z.string() }), outputSchema: z.string() }) })
      )
      expect(noExecute).toBeInstanceOf(AiSdkToolkit.AiSdkToolError)
      expect(noExecute).toMatchObject({ _tag: "AiSdkToolError", tool: "ask_user", reason: "MissingExecute" })
      expect(noExecute.message).toContain("AI SDK tool 'ask_user' cannot be a chat-ts tool: it has no `execute`")

      const provider = yield* Effect.flip(
        AiSdkToolkit.make({ web_search: { type: "provider", id: "openai.web_search", args: {}, inputSchema: z.object({}), execute: async () => 1 } })
      )
      expect(provider).toMatchObject({ tool: "web_search", reason: "ProviderTool" })

      // A Standard Schema whose vendor gives no JSON Schema: the AI SDK could not send it either.
      const opaque = {
        "~standard": { version: 1, vendor: "opaque", validate: (value: unknown) => ({ value }) }
      }
      const noJson = yield* Effect.flip(AiSdkToolkit.make({ opaque: { inputSchema: opaque, execute: async () => 1 } }))
      expect(noJson).toMatchObject({ tool: "opaque", reason: "InvalidSchema" })
      expect(noJson.detail).toContain("does not support JSON Schema conversion")

      const notATool = yield* Effect.flip(AiSdkToolkit.make({ broken: null as unknown as AiSdkToolkit.AiTool }))
      expect(notATool).toMatchObject({ tool: "broken", reason: "InvalidTool" })
      const throwing = yield* Effect.flip(AiSdkToolkit.make({
        trap: {
          inputSchema: z.object({}),
          get execute(): never {
            throw new Error("no peeking")
          }
        }
      }))
      expect(throwing).toMatchObject({ tool: "trap", reason: "InvalidTool", detail: "reading it threw (no peeking)" })

      // Two JSON Schemas with the same $id in two tools: each is checked on its own.
      const idTools = yield* AiSdkToolkit.make({
        one: tool({ inputSchema: jsonSchema<{ a: string }>({ $id: "same", type: "object", properties: { a: { type: "string" } }, required: ["a"] }), execute: async () => 1 }),
        two: tool({ inputSchema: jsonSchema<{ b: number }>({ $id: "same", type: "object", properties: { b: { type: "number" } }, required: ["b"] }), execute: async () => 2 })
      })
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "1", name: "one", arguments: { a: "x" } }, { id: "2", name: "two", arguments: { b: 2 } }]),
        MockLanguageModel.text("ok")
      ])
      const chat = yield* Chat.make({ tools: idTools }).pipe(Effect.provide(Layer.merge(model.layer, idTools.handlers)))
      const done = yield* chat.complete(ask)
      expect([statusOf(done.messages, "1"), statusOf(done.messages, "2")]).toMatchObject([
        { _tag: "Completed", result: 1 },
        { _tag: "Completed", result: 2 }
      ])
    }))

  it.effect("a schema that checks asynchronously: its JSON Schema is checked before a decision, its own check before execute", () =>
    Effect.gen(function*() {
      const ran: Array<unknown> = []
      const tools = {
        reserve: tool({
          description: "Reserves a name.",
          inputSchema: z.object({ name: z.string().min(1) }).refine(async ({ name }) => name !== "taken", "that name is taken"),
          execute: async (input) => {
            ran.push(input)
            return "reserved"
          }
        })
      }
      const { chat } = yield* chatOf(tools, [
        MockLanguageModel.toolCalls([
          { id: "empty", name: "reserve", arguments: { name: "" } },
          { id: "taken", name: "reserve", arguments: { name: "taken" } },
          { id: "free", name: "reserve", arguments: { name: "free" } }
        ]),
        MockLanguageModel.text("Done.")
      ])
      const done = yield* chat.complete(ask)
      expect(statusOf(done.messages, "empty")?._tag).toBe("Failed")
      expect(statusOf(done.messages, "taken")).toMatchObject({ _tag: "Failed", error: { error: expect.stringContaining("that name is taken") } })
      expect(statusOf(done.messages, "free")).toMatchObject({ _tag: "Completed", result: "reserved" })
      expect(ran).toEqual([{ name: "free" }])
    }))
})
