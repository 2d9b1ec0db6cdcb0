/**
 * A `Worker.resume` decide that ends a call waiting under a decision policy by
 * writing its status itself (`Rejected`, `Cancelled`, `Expired`) is held to
 * the policy as `Messages.reject` / `Messages.cancel` would be: the policy's
 * `reject` rule (and the requester's right to withdraw their own request) is
 * kept whatever entry the application uses. Refused: `DecisionNotAllowed`,
 * nothing saved, nothing run, the model not called.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Result, Schema } from "effect"
import * as TestClock from "effect/testing/TestClock"
import fc from "fast-check"
import { Action, Chat, ConversationStore, Messages, Steering, Tool, Toolkit, Turn, Worker } from "../src/index.js"
import * as StatusWrites from "../src/turn/StatusWrites.js"
import { MockLanguageModel } from "../src/testing/index.js"

// One person of finance approves or rejects; carol (no role) may reject too; the requester may not approve.
const Settle = Tool.make("settle", {
  description: "Settle a bill.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ settled: Schema.Number }),
  decisionPolicy: { approve: { roles: ["finance"] }, reject: { roles: ["finance"], ids: ["carol"] }, notRequester: true }
})
const Note = Tool.make("note", { description: "Take a note.", parameters: { text: Schema.String }, success: Schema.String })

const DEADLINE = 60_000
const tools = Toolkit.withStrategy(
  Toolkit.make(Settle, Note),
  (call) => call.name === "settle" ? Action.RequireApproval({ expiresAt: DEADLINE }) : Action.RequireApproval()
)

const alice: Messages.Identity = { id: "alice" }
const bob: Messages.Identity = { id: "bob", roles: ["finance"] }
const mallory: Messages.Identity = { id: "mallory" }

/** A conversation stored paused on `s1` (settle, asked by alice) and `n1` (note, no policy). */
const setup = Effect.gen(function*() {
  const store = yield* ConversationStore.ConversationStore
  const runs: Array<string> = []
  const model = MockLanguageModel.make([
    MockLanguageModel.toolCalls([{ id: "s1", name: "settle", arguments: { amount: 900 } }, { id: "n1", name: "note", arguments: { text: "hi" } }]),
    MockLanguageModel.text("Done.")
  ])
  const chat = yield* Chat.make({ tools }).pipe(
    Effect.provide(Layer.merge(
      model.layer,
      tools.toLayer({
        settle: ({ amount }) => Effect.sync(() => (runs.push(`settle:${amount}`), { settled: amount })),
        note: ({ text }) => Effect.sync(() => (runs.push(`note:${text}`), "noted"))
      })
    ))
  )
  const paused = yield* chat.complete(Messages.fromUser("Settle 900 and note it.", { sender: alice }))
  yield* store.save("conv", paused.messages, { expectedVersion: 0 })
  const stored = Option.getOrThrow(yield* store.load("conv"))
  return { store, chat, runs, model, stored }
})

type Env = Effect.Success<typeof setup>

const write = (messages: Messages.Messages, id: string, status: Messages.ToolCallStatus) =>
  Messages.updateTool(messages, id, (call) => ({ ...call, status }))

/** Resumes with `decide`, expecting a refusal: nothing saved, nothing run, the model not asked. */
const refused = (env: Env, decide: (messages: Messages.Messages) => Messages.Messages) =>
  Effect.gen(function*() {
    const requests = env.model.requests.length
    const error = yield* Effect.flip(Worker.resume(env.chat, "conv", (stored) => Effect.succeed(decide(stored.messages))))
    const after = Option.getOrThrow(yield* env.store.load("conv"))
    expect(after.version).toBe(env.stored.version)
    expect(Messages.findTool(after.messages, "s1")!.status._tag).toBe("AwaitingApproval")
    expect(env.runs).toEqual([])
    expect(env.model.requests.length).toBe(requests)
    return error
  })

const record = (person: Messages.Identity, at = 1) => ({ by: person.id, at, ...(person.roles === undefined ? {} : { roles: person.roles }) })

describe("a Worker.resume decide that writes a call's 'no' itself", () => {
  it.effect("a fresh { _tag: 'Cancelled' } (nobody named), or one naming someone the policy does not let withdraw it: DecisionNotAllowed, nothing saved or run", () =>
    Effect.gen(function*() {
      const env = yield* setup
      const bare = yield* refused(env, (messages) => write(messages, "s1", { _tag: "Cancelled", by: "operator" }))
      expect(bare).toMatchObject({ _tag: "DecisionNotAllowed", id: "s1", kind: "cancel" })
      expect(bare.message).toContain("needs to know who withdraws it")
      const foreign = yield* refused(env, (messages) => write(messages, "s1", { _tag: "Cancelled", by: "operator", cancellation: record(mallory) }))
      expect(foreign).toMatchObject({ _tag: "DecisionNotAllowed", by: "mallory", kind: "cancel" })
      // A user message the decide adds does not make its sender a withdrawer unless the policy says so.
      const steered = yield* refused(env, (messages) => [
        ...write(messages, "s1", { _tag: "Cancelled", by: "user-message" }),
        Messages.user("forget it", { sender: mallory })
      ])
      expect(steered).toMatchObject({ _tag: "DecisionNotAllowed", by: "mallory" })
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("a fresh { _tag: 'Rejected' } with no decision, by policy, or by someone the reject rule does not name: refused", () =>
    Effect.gen(function*() {
      const env = yield* setup
      for (const status of [
        { _tag: "Rejected", by: "user" },
        { _tag: "Rejected", by: "policy", reason: "no" },
        { _tag: "Rejected", by: "user", decision: { ...record(bob), kind: "approve" as const } }
      ] as const) {
        expect(yield* refused(env, (messages) => write(messages, "s1", status))).toMatchObject({ _tag: "DecisionNotAllowed", kind: "reject" })
      }
      const foreign = yield* refused(env, (messages) => write(messages, "s1", { _tag: "Rejected", by: "user", decision: { ...record(mallory), kind: "reject" } }))
      expect(foreign.message).toContain("not among those its policy lets reject")
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("an Expired written before the request's deadline is refused; after it, it stands", () =>
    Effect.gen(function*() {
      const env = yield* setup
      const early = yield* refused(env, (messages) => write(messages, "s1", { _tag: "Expired", expiresAt: DEADLINE }))
      expect(early).toMatchObject({ _tag: "DecisionNotAllowed", kind: "cancel" })
      expect(early.message).toContain("before it")
      yield* TestClock.setTime(DEADLINE)
      const late = yield* Worker.resume(env.chat, "conv", (stored) =>
        Effect.succeed(write(Result.getOrThrow(Messages.approve(stored.messages, "n1")), "s1", { _tag: "Expired", expiresAt: DEADLINE })))
      expect(late.outcome._tag).toBe("Complete")
      expect(env.runs).toEqual(["note:hi"])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("written by hand as the entries write them, the 'no's stand: the requester's withdrawal, a rejection by someone the rule names", () =>
    Effect.gen(function*() {
      // alice (the requester) withdraws it with a written record; the note is approved; the turn completes.
      const env = yield* setup
      const own = yield* Worker.resume(env.chat, "conv", (stored) =>
        Effect.succeed(write(
          Result.getOrThrow(Messages.approve(stored.messages, "n1")),
          "s1",
          { _tag: "Cancelled", by: "requester", cancellation: record(alice) }
        )))
      expect(own.outcome._tag).toBe("Complete")
      expect(env.runs).toEqual(["note:hi"])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("a rejection written by hand naming carol, whom the reject rule names by id, stands", () =>
    Effect.gen(function*() {
      const env = yield* setup
      const rejected = yield* Worker.resume(env.chat, "conv", (stored) =>
        Effect.succeed(write(
          Result.getOrThrow(Messages.reject(stored.messages, "n1")),
          "s1",
          { _tag: "Rejected", by: "user", decision: { by: "carol", at: 1, kind: "reject" } }
        )))
      expect(rejected.outcome._tag).toBe("Complete")
      expect(env.runs).toEqual([])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  const entries: ReadonlyArray<readonly [string, (messages: Messages.Messages) => Messages.Messages]> = [
    ["Steering.steer by the requester", (messages) => Result.getOrThrow(Steering.steer(messages, Messages.user("Never mind.", { sender: alice })))],
    ["Steering.steer without a sender, its cancellation naming a rejecter", (messages) =>
      Result.getOrThrow(Steering.steer(messages, Messages.user("Never mind."), { cancellation: record(bob) }))],
    ["Messages.cancel by a rejecter", (messages) =>
      Result.getOrThrow(Messages.cancel(Result.getOrThrow(Messages.approve(messages, "n1")), "s1", { by: "operator", cancellation: record(bob) }))],
    ["Messages.append superseding, by the requester", (messages) =>
      Result.getOrThrow(Messages.append(messages, Messages.user("Skip it.", { sender: alice }), { supersede: "moved on" }))],
    ["Messages.reject by a rejecter", (messages) =>
      Result.getOrThrow(Messages.reject(Result.getOrThrow(Messages.approve(messages, "n1")), "s1", "no", { decider: bob, at: 1 }))]
  ]
  for (const [name, decide] of entries) {
    it.effect(`the entries inside a decide pass unchanged: ${name}`, () =>
      Effect.gen(function*() {
        const env = yield* setup
        const result = yield* Worker.resume(env.chat, "conv", (stored) => Effect.succeed(decide(stored.messages)))
        expect(["Cancelled", "Rejected"]).toContain(Messages.findTool(result.messages, "s1")!.status._tag)
        expect(env.runs).not.toContain("settle:900")
      }).pipe(Effect.provide(ConversationStore.layerMemory)))
  }

  it.effect("a call without a policy may be ended by any status write, as before", () =>
    Effect.gen(function*() {
      const env = yield* setup
      const result = yield* Worker.resume(env.chat, "conv", (stored) =>
        Effect.succeed(write(
          Result.getOrThrow(Messages.reject(stored.messages, "s1", "no", { decider: bob, at: 1 })),
          "n1",
          { _tag: "Cancelled", by: "operator" }
        )))
      expect(result.outcome._tag).toBe("Complete")
      expect(env.runs).toEqual([])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))
})

describe("the check of a written 'no', as a property", () => {
  const people = ["ann", "ben", "cid"]
  const roles = ["finance", "ops"]
  const deciders = fc.option(
    fc.record({ ids: fc.option(fc.subarray(people), { nil: undefined }), roles: fc.option(fc.subarray(roles), { nil: undefined }) }, { requiredKeys: [] }),
    { nil: undefined }
  )
  const person = fc.record({ id: fc.constantFrom(...people), roles: fc.subarray(roles) })

  /** A turn paused on c1 under `policy`, asked for by `requester`. */
  const pausedUnder = (policy: Messages.DecisionPolicy, requester: string): Messages.Messages => {
    let [messages] = Turn.step(Messages.fromUser("Pay.", { sender: { id: requester } }), Turn.Event.Resume({ now: 0 }), Turn.defaultConfig)
    ;[messages] = Turn.step(messages, Turn.Event.ModelResponded({
      message: Messages.assistant([Messages.toolCall({ id: "c1", name: "settle", arguments: "{\"amount\":1}" })])
    }), Turn.defaultConfig)
    ;[messages] = Turn.step(
      messages,
      Turn.Event.Decided({ now: 0, decisions: [{ id: "c1", decision: Turn.Decision.RequireApproval({ policy }) }] }),
      Turn.defaultConfig
    )
    return messages
  }

  it("a Cancelled or Rejected written by hand naming a person passes exactly when Messages.cancel / Messages.reject by that person would succeed", () => {
    fc.assert(
      fc.property(deciders, deciders, fc.constantFrom(...people), person, fc.boolean(), (approve, reject, requester, who, cancel) => {
        const policy = { ...(approve === undefined ? {} : { approve }), ...(reject === undefined ? {} : { reject }) }
        const before = pausedUnder(policy, requester)
        const named = { by: who.id, roles: who.roles, at: 1 }
        const entry = cancel
          ? Messages.cancel(before, "c1", { by: "operator", cancellation: named })
          : Messages.reject(before, "c1", "no", { decider: { id: who.id, roles: who.roles }, at: 1 })
        const written = write(
          before,
          "c1",
          cancel ? { _tag: "Cancelled", by: "operator", cancellation: named } : { _tag: "Rejected", by: "user", decision: { ...named, kind: "reject" } }
        )
        const checked = StatusWrites.check(before, written, 1)
        expect(Result.isSuccess(checked)).toBe(Result.isSuccess(entry))
        if (Result.isFailure(checked)) expect(checked.failure).toMatchObject({ _tag: "DecisionNotAllowed", kind: cancel ? "cancel" : "reject" })
        // What the entry itself returns always passes.
        if (Result.isSuccess(entry)) expect(Result.isSuccess(StatusWrites.check(before, entry.success, 1))).toBe(true)
        // Naming nobody never passes under a policy.
        const bare = write(before, "c1", cancel ? { _tag: "Cancelled", by: "operator" } : { _tag: "Rejected", by: "user" })
        expect(Result.isFailure(StatusWrites.check(before, bare, 1))).toBe(true)
      }),
      { numRuns: 300 }
    )
  })
})

/** `messages` with every call rewritten by `f`, as a decide may without `Messages.updateTool`. */
const mapCalls = (messages: Messages.Messages, f: (call: Messages.ToolCallPart) => Messages.ToolCallPart): Messages.Messages =>
  messages.map((message) => ({ ...message, parts: message.parts.map((part) => part._tag === "ToolCall" ? f(part) : part) }))

describe("a Worker.resume decide that rewrites a call past the rule fixed on it", () => {
  it.effect("a copy of the call without its decidedUnder, its status a fresh Approved: the rule is put back, the call waits, nothing runs", () =>
    Effect.gen(function*() {
      const env = yield* setup
      const result = yield* Worker.resume(env.chat, "conv", (stored) =>
        Effect.succeed(mapCalls(stored.messages, ({ decidedUnder: _, ...call }) => call.id === "s1" ? { ...call, status: { _tag: "Approved" } } : call)))
      expect(result.outcome._tag).toBe("Paused")
      const s1 = Messages.findTool(result.messages, "s1")!
      expect(s1.status._tag).toBe("AwaitingApproval")
      expect(s1.decidedUnder?.policy).toEqual(Settle.decisionPolicy)
      expect(env.runs).toEqual([])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("a result written for a call under a policy that never ran (Completed: the model would read it as the tool's answer; Failed), or Running: refused", () =>
    Effect.gen(function*() {
      const env = yield* setup
      for (const status of [{ _tag: "Completed", result: { settled: 900 } }, { _tag: "Failed", error: "no" }] as const) {
        const error = yield* refused(env, (messages) => write(messages, "s1", status))
        expect(error).toMatchObject({ _tag: "DecisionNotAllowed", id: "s1", kind: "approve" })
        expect(error.message).toContain("did not run")
      }
      const running = yield* refused(env, (messages) => write(messages, "s1", { _tag: "Running", editedArguments: `{"amount":9000}` }))
      expect(running).toMatchObject({ _tag: "DecisionNotAllowed", id: "s1", kind: "approve" })
      expect(running.message).toContain("did not start")
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("a call the stored state does not hold, added approved (the waiting one renamed): refused, nothing saved or run", () =>
    Effect.gen(function*() {
      const env = yield* setup
      const renamed = yield* refused(env, (messages) =>
        mapCalls(messages, ({ decidedUnder: _, ...call }) => call.id === "s1" ? { ...call, id: "s2", status: { _tag: "Approved" } } : call))
      expect(renamed).toMatchObject({ _tag: "DecisionNotAllowed", id: "s2", kind: "approve" })
      expect(renamed.message).toContain("only as Proposed")
    }).pipe(Effect.provide(ConversationStore.layerMemory)))
})

describe("a Worker.resume decide that writes a status on a call its strategy has not decided", () => {
  it.effect("a Proposed call (stored by a turn that stopped before deciding it) written Approved: refused; left Proposed, its strategy and policy decide it", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const runs: Array<string> = []
      const model = MockLanguageModel.make([MockLanguageModel.text("Done.")])
      const chat = yield* Chat.make({ tools }).pipe(
        Effect.provide(Layer.merge(model.layer, tools.toLayer({
          settle: ({ amount }) => Effect.sync(() => (runs.push(`settle:${amount}`), { settled: amount })),
          note: ({ text }) => Effect.sync(() => (runs.push(`note:${text}`), "noted"))
        })))
      )
      const proposed: Messages.Messages = [
        Messages.user("Settle 900.", { sender: alice }),
        Messages.assistant([Messages.toolCall({ id: "s1", name: "settle", arguments: `{"amount":900}` })])
      ]
      yield* store.save("conv", proposed, { expectedVersion: 0 })
      const error = yield* Effect.flip(Worker.resume(chat, "conv", (stored) => Effect.succeed(write(stored.messages, "s1", { _tag: "Approved" }))))
      expect(error).toMatchObject({ _tag: "DecisionNotAllowed", id: "s1", kind: "approve" })
      expect(runs).toEqual([])
      expect(model.requests.length).toBe(0)
      // Left as it is, the strategy sends it to a person under the tool's policy.
      const result = yield* Worker.resume(chat, "conv", (stored) => Effect.succeed(stored.messages))
      expect(Messages.findTool(result.messages, "s1")!.status).toMatchObject({ _tag: "AwaitingApproval", policy: Settle.decisionPolicy })
      expect(runs).toEqual([])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))
})

describe("a Worker.resume decide that writes a status on a call that already ran", () => {
  it.effect("a Completed call written Approved (or Running, or Proposed) again: refused, it never runs twice", () =>
    Effect.gen(function*() {
      const env = yield* setup
      const first = yield* Worker.resume(env.chat, "conv", (stored) => Effect.fromResult(Messages.approve(stored.messages, "n1")))
      expect(first.outcome._tag).toBe("Paused")
      expect(env.runs).toEqual(["note:hi"])
      for (const status of [{ _tag: "Approved" }, { _tag: "Running" }, { _tag: "Proposed" }] as const) {
        const error = yield* Effect.flip(Worker.resume(env.chat, "conv", (stored) => Effect.succeed(write(stored.messages, "n1", status))))
        expect(error).toMatchObject({ _tag: "DecisionNotAllowed", id: "n1" })
        expect(error.message).toContain("already ended (Completed)")
      }
      expect(env.runs).toEqual(["note:hi"])
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("a call left Running by a crash written Approved (or Proposed): refused; it is never started again but by the rerun option", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const runs: Array<string> = []
      const model = MockLanguageModel.make([MockLanguageModel.text("Done.")])
      const chat = yield* Chat.make({ tools }).pipe(
        Effect.provide(Layer.merge(model.layer, tools.toLayer({
          settle: ({ amount }) => Effect.sync(() => (runs.push(`settle:${amount}`), { settled: amount })),
          note: ({ text }) => Effect.sync(() => (runs.push(`note:${text}`), "noted"))
        })))
      )
      const crashed: Messages.Messages = [
        Messages.user("Note it.", { sender: alice }),
        Messages.assistant([{ ...Messages.toolCall({ id: "n1", name: "note", arguments: `{"text":"hi"}` }), status: { _tag: "Running" } }])
      ]
      yield* store.save("conv", crashed, { expectedVersion: 0 })
      for (const status of [{ _tag: "Approved" }, { _tag: "Proposed" }] as const) {
        const error = yield* Effect.flip(Worker.resume(chat, "conv", (stored) => Effect.succeed(write(stored.messages, "n1", status))))
        expect(error).toMatchObject({ _tag: "DecisionNotAllowed", id: "n1" })
        expect(error.message).toContain("already started")
      }
      expect(runs).toEqual([])
      expect(model.requests.length).toBe(0)
    }).pipe(Effect.provide(ConversationStore.layerMemory)))
})
