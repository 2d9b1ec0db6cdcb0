import { Chat, type ChatError, ConversationStore, DecisionPolicy, Messages, PauseReason, Steering } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import fc from "fast-check"
import { WorkflowEngine } from "effect/workflow"
import { ChatWorkflow, Decision } from "../src/index.js"
import { queuedCount } from "../src/internal/shell.js"
import { eventually, files, handlers, recorder, testLayer, turns } from "./fixtures.js"

type Choice = "approve" | "reject" | "edit" | "cancel"

/** At the first pause, a user message instead of decisions (by one rule or the other), or none. */
type Steer = "none" | Steering.Rule

const steering = fc.constantFrom<Steer>("none", "none", "cancel", "queue")

const steerMessage = Messages.user("Something else, please.", { sender: { id: "ann" } })

interface Call {
  readonly name: string
  readonly arguments: unknown
  readonly choice: Choice
}

/** Calls that run, wait for a person, are scheduled, name no tool, or carry bad arguments; each with a person's choice. */
const call: fc.Arbitrary<Call> = fc.record({
  name: fc.constantFrom("list_files", "delete_files", "delete_files", "remind", "no_such_tool", "bad_args", "vault"),
  choice: fc.constantFrom<Choice>("approve", "reject", "edit", "cancel")
}).map(({ choice, name }) =>
  name === "bad_args"
    ? { name: "delete_files", arguments: { paths: 3 }, choice }
    : name === "vault"
    // Under the vault's policy (two people of ops, not the requester): an edit is no quorum's vote, so it approves.
    ? { name: "delete_files", arguments: { paths: ["vault/p"] }, choice: choice === "edit" ? "approve" : choice }
    : { name, arguments: name === "remind" ? { text: "t" } : name === "list_files" ? { folder: "f" } : { paths: ["p"] }, choice }
)

/** Up to three responses with tool calls, then a final answer. */
const script = fc.array(fc.array(call, { minLength: 1, maxLength: 3 }), { minLength: 0, maxLength: 3 })

const toScript = (responses: ReadonlyArray<ReadonlyArray<Call>>) => [
  ...responses.map((calls, i) =>
    MockLanguageModel.toolCalls(calls.map((c, j) => ({ id: `s${i}_${j}`, name: c.name, arguments: c.arguments })))
  ),
  MockLanguageModel.text("end")
]

const choiceOf = (responses: ReadonlyArray<ReadonlyArray<Call>>, id: string): Choice => {
  const [, i, j] = /^s(\d+)_(\d+)$/.exec(id)!
  return responses[Number(i)]![Number(j)]!.choice
}

/** Who decides a call under the vault's policy: ben's yes first, then cid's; cid rejects. At a fixed time, so both shells record the same. */
const ben = { id: "ben", roles: ["ops"] }
const cid = { id: "cid", roles: ["ops"] }
const underPolicy = (call: Messages.ToolCallPart) => DecisionPolicy.of(call) !== undefined

const decisionFor = (messages: Messages.Messages, id: string, choice: Choice): Decision.PersonDecision => {
  const call = Messages.findTool(messages, id)
  if (call !== undefined && underPolicy(call)) {
    if (choice === "reject") return Decision.Reject.make({ reason: `no ${id}`, decider: cid, at: 1 })
    return Decision.Approve.make({ decider: DecisionPolicy.progress(call).votes.length === 0 ? ben : cid, at: 1 })
  }
  if (choice === "reject") return Decision.reject(`no ${id}`)
  if (choice === "cancel") return Decision.cancel({ by: "operator", reason: `withdrawn ${id}` })
  if (choice === "approve") return Decision.approve()
  return Decision.approve(Messages.findTool(messages, id)?.name === "remind" ? { text: "edited" } : { paths: ["edited"] })
}

/** The in-process `Chat`: pause, decide every waiting call, resume, until the turn ends. */
const viaChat = (responses: ReadonlyArray<ReadonlyArray<Call>>, steer: Steer) => {
  const model = MockLanguageModel.make(toScript(responses))
  return Effect.gen(function*() {
    const chat = yield* Chat.make({ tools: files })
    let result = yield* chat.complete(Messages.fromUser("go", { sender: { id: "ann" } }))
    if (result.outcome._tag === "Paused" && steer !== "none") {
      result = yield* chat.resume(Result.getOrThrow(Steering.steer(result.messages, steerMessage, { rule: steer })))
    }
    while (result.outcome._tag === "Paused") {
      let messages = result.messages
      for (const id of PauseReason.toolIds(result.outcome.reason)) {
        // A quorum's call takes one vote per pause: the turn pauses again on it until the second.
        const decision = decisionFor(messages, id, choiceOf(responses, id))
        const by = Decision.decideOptions(decision)
        messages = yield* (decision._tag === "Approve"
          ? by === undefined ? chat.approve(messages, id, decision.edited) : Effect.fromResult(Messages.approve(messages, id, decision.edited, by))
          : decision._tag === "Reject"
          ? by === undefined ? chat.reject(messages, id, decision.reason) : Effect.fromResult(Messages.reject(messages, id, decision.reason, by))
          : chat.cancel(messages, id, { by: "operator", reason: decision.reason! }))
      }
      result = yield* chat.resume(messages)
    }
    return result.messages
  }).pipe(Effect.provide(Layer.merge(model.layer, handlers(recorder()))))
}

/** The durable turn: decide each call as it comes to wait, from outside, until the turn ends. */
const viaWorkflow = (responses: ReadonlyArray<ReadonlyArray<Call>>, steer: Steer) => {
  const model = MockLanguageModel.make(toScript(responses))
  return Effect.gen(function*() {
    const id = yield* turns.start("property", Messages.fromUser("go", { sender: { id: "ann" } }))
    const decided = new Map<string, Decision.PersonDecision>()
    /** The length of the published messages when the steering message was sent, until the turn took it. */
    let steeredAt: number | undefined
    let steered = steer === "none"
    // Poll like a UI would: decide whatever waits, until the turn ends (bounded).
    for (let poll = 0; poll < 5_000; poll++) {
      // The in-memory engine misses a decision that comes while the workflow is still on its way to sleep
      // (the cluster engine queues it): give the workflow time to settle between polls, as a person would.
      yield* Effect.repeat(Effect.yieldNow, { times: 20 })
      const found = yield* Effect.result(turns.read(id))
      if (Result.isFailure(found)) {
        expect(found.failure._tag).toBe("TurnNotFound")
        yield* Effect.yieldNow
        continue
      }
      const view = found.success
      if (view.status._tag === "Complete" || view.status._tag === "Failed") return view.messages
      const waiting = yield* turns.pending(id)
      if (!steered && waiting.length > 0) {
        // At the first pause, the user writes instead of deciding (sent again until the turn took it).
        if (steeredAt === undefined || (view.messages.length === steeredAt && queuedCount(view.messages) === 0)) {
          steeredAt = view.messages.length
          yield* turns.steer(id, steerMessage, { rule: steer as Steering.Rule })
          continue
        }
        steered = true
        continue
      }
      for (const call of waiting) {
        const decision = decisionFor(view.messages, call.id, choiceOf(responses, call.id))
        decided.set(call.id, decision)
        yield* turns.decide(id, call.id, decision)
      }
      // Now and then, send again the decisions the turn has not moved on from (a retry is accepted and wakes
      // the workflow): the in-memory engine may have missed one that came while the workflow went to sleep.
      if (waiting.length === 0 && poll % 10 === 9) {
        for (const [call, decision] of decided) yield* Effect.ignore(turns.decide(id, call, decision))
      }
    }
    return yield* Effect.die(new Error("the turn did not end in 50 rounds"))
  }).pipe(Effect.provide(testLayer(model, recorder())))
}

describe("ChatWorkflow and Chat", () => {
  it("reach the same final messages for the same model script, decisions (approve, edit, reject, cancel, a quorum's votes) and steering", async () => {
    await fc.assert(
      fc.asyncProperty(script, steering, (responses, steer) =>
        Effect.runPromise(Effect.gen(function*() {
          const inProcess = yield* viaChat(responses, steer)
          const durable = yield* viaWorkflow(responses, steer)
          expect(durable).toEqual(inProcess)
          expect(Result.isSuccess(Messages.encode(durable))).toBe(true)
        }))),
      { numRuns: 40 }
    )
  }, 60_000)
})

// ---------------------------------------------------------------------------
// How a turn ends badly: the same error from both shells (both take it from `Shell.failureOf`)
// ---------------------------------------------------------------------------

/** The most model calls of the turns below, in both shells. */
const maxSteps = 2
const bounded = ChatWorkflow.make({ name: "bounded", tools: files, maxSteps })

/** An input that ends the turn with an error: the step limit, approved edits that do not fit, or new input on pending calls. */
type Ending =
  | { readonly _tag: "StepLimit"; readonly calls: number }
  | { readonly _tag: "InvalidEdits"; readonly edits: ReadonlyArray<"fits" | "wrongType" | "unknownKey"> }
  | { readonly _tag: "PendingCalls"; readonly pending: ReadonlyArray<"approval" | "scheduled" | "done"> }

const ending: fc.Arbitrary<Ending> = fc.oneof(
  fc.record({ _tag: fc.constant("StepLimit" as const), calls: fc.integer({ min: 1, max: 2 }) }),
  fc.record({
    _tag: fc.constant("InvalidEdits" as const),
    edits: fc.array(fc.constantFrom("fits" as const, "wrongType" as const, "unknownKey" as const), { minLength: 1, maxLength: 3 })
  }).filter((e) => e.edits.some((edit) => edit !== "fits")),
  fc.record({
    _tag: fc.constant("PendingCalls" as const),
    pending: fc.array(fc.constantFrom("approval" as const, "scheduled" as const, "done" as const), { minLength: 1, maxLength: 3 })
  }).filter((e) => e.pending.some((p) => p !== "done"))
)

const deleteCall = (id: string, status: Messages.ToolCallStatus): Messages.ToolCallPart => ({
  _tag: "ToolCall",
  id,
  name: "delete_files",
  arguments: JSON.stringify({ paths: [id] }),
  status
})

const editText = { fits: `{"paths":["x"]}`, wrongType: `{"paths":3}`, unknownKey: `{"paths":[],"force":true}` }

/** The messages a turn starts from, and what its model says (a loop of calls for the step limit). */
const inputOf = (end: Ending): { readonly messages: Messages.Messages; readonly model: MockLanguageModel.MockLanguageModel } => {
  const ask = Messages.fromUser("go")
  switch (end._tag) {
    case "StepLimit":
      return {
        messages: ask,
        model: MockLanguageModel.make(() =>
          MockLanguageModel.toolCalls(Array.from({ length: end.calls }, () => ({ name: "list_files", arguments: { folder: "f" } }))))
      }
    case "InvalidEdits":
      return {
        messages: [...ask, {
          role: "assistant",
          parts: end.edits.map((edit, i) => deleteCall(`e${i}`, { _tag: "Approved", editedArguments: editText[edit] }))
        }],
        model: MockLanguageModel.make([MockLanguageModel.text("unused")])
      }
    case "PendingCalls":
      return {
        messages: [...ask, {
          role: "assistant",
          parts: end.pending.map((p, i) =>
            deleteCall(
              `p${i}`,
              p === "approval" ? { _tag: "AwaitingApproval" } : p === "scheduled" ? { _tag: "Scheduled", at: 4_000_000_000_000 } : {
                _tag: "Completed",
                result: { deleted: 1 }
              }
            )
          )
        }, Messages.user("Something else.")],
        model: MockLanguageModel.make([MockLanguageModel.text("unused")])
      }
  }
}

let conversations = 0

describe("ChatWorkflow and Chat end a turn the same way", () => {
  it("the same error (tag, fields and messages) for the step limit, edits that do not fit and new input on pending calls", async () => {
    await fc.assert(
      fc.asyncProperty(ending, (end) =>
        Effect.runPromise(Effect.gen(function*() {
          const chatInput = inputOf(end)
          const inProcess = yield* Chat.make({ tools: files, maxSteps }).pipe(
            Effect.flatMap((chat) => Effect.flip(chat.complete(chatInput.messages))),
            Effect.provide(Layer.merge(chatInput.model.layer, handlers(recorder())))
          )
          const flowInput = inputOf(end)
          const durable = yield* Effect.gen(function*() {
            const id = yield* bounded.start(`ending-${++conversations}`, flowInput.messages)
            const done = yield* eventually(bounded.read(id), (view) => view.status._tag === "Failed")
            return done.status._tag === "Failed" ? done.status.error : undefined
          }).pipe(
            Effect.provide(ChatWorkflow.layer(bounded)),
            Effect.provide(Layer.mergeAll(WorkflowEngine.layerMemory, ConversationStore.layerMemory, flowInput.model.layer, handlers(recorder())))
          )
          expect(inProcess._tag).toBe(end._tag === "StepLimit" ? "StepLimitReached" : end._tag === "InvalidEdits" ? "InvalidEditedArguments" : "PendingToolCalls")
          expect(durable).toBeDefined()
          expect(durable!.constructor).toBe(inProcess.constructor)
          expect({ ...durable! }).toEqual({ ...(inProcess as ChatError.ChatError) })
          expect((durable as { readonly messages?: unknown }).messages).toBeDefined()
          expect(chatInput.model.requests.length).toBe(flowInput.model.requests.length)
        }))),
      { numRuns: 30 }
    )
  }, 60_000)
})
