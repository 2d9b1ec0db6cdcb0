/**
 * Documents written by chat-ts 0.1 (Effect 3) still read, write and resume
 * the same: the fixtures of `fixtures/v0.1/` (see its README) decode, encode
 * back byte for byte, verify when signed, and resume through `Chat` on a
 * scripted model with the tools of the README's generator. An approved call
 * runs exactly once; a call the crash left running is never run again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted, Result } from "effect"
import { TestClock } from "effect/testing"
import { readFileSync } from "node:fs"
import { Chat, Messages, SignedState } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { handlers, kit, type Ran, T0 } from "./support/compatTools.js"

// ---------------------------------------------------------------------------
// The fixtures
// ---------------------------------------------------------------------------

const read = (name: string): string => readFileSync(new URL(`./fixtures/v0.1/${name}`, import.meta.url), "utf8")

/** The unsigned documents. */
const documents = [
  "paused.json",
  "scheduled.json",
  "mixed.json",
  "approved-audited.json",
  "rejected-audited.json",
  "running-crashed.json",
  "completed-audited.json",
  "long-paused.json"
] as const

/** The signed documents: what each signs, and its binding. */
const signed = [
  { file: "signed-paused.json", of: "paused.json", conversationId: "conv-1", version: 3 },
  { file: "signed-audited.json", of: "approved-audited.json", conversationId: "conv-2", version: 7 },
  { file: "signed-long.json", of: "long-paused.json", conversationId: "conv-3", version: 1 }
] as const

const secret = Redacted.make("0123456789abcdef0123456789abcdef-fixture-secret")

const load = (name: string): Messages.Messages => Result.getOrThrow(Messages.fromJson(read(name)))

/** A chat with the generator's tools on a model answering these responses; `ran` records the handlers' calls. */
const setup = (responses: ReadonlyArray<MockLanguageModel.ScriptedResponse> = [MockLanguageModel.text("Done.")]) =>
  Effect.gen(function*() {
    const ran: Ran = []
    const model = MockLanguageModel.make(responses)
    const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers(ran))))
    return { chat, model, ran }
  })

const callOf = (messages: Messages.Messages, id: string): Messages.ToolCallPart => {
  const call = Messages.findTool(messages, id)
  if (call === undefined) throw new Error(`no call ${id}`)
  return call
}

// ---------------------------------------------------------------------------
// Reading and writing
// ---------------------------------------------------------------------------

describe("v0.1 documents: decode and encode byte for byte", () => {
  for (const name of documents) {
    it(`${name}: fromJson, then toJson gives the same bytes; decode of the parsed JSON agrees`, () => {
      const text = read(name)
      const messages = Result.getOrThrow(Messages.fromJson(text))
      expect(Result.getOrThrow(Messages.toJson(messages))).toBe(text)
      const decoded = Messages.decode(JSON.parse(text))
      expect(Result.isSuccess(decoded)).toBe(true)
      expect(Result.getOrThrow(decoded)).toStrictEqual(messages)
      // The Schema path of the encoder writes the same document.
      expect(Result.getOrThrow(Messages.encode(messages))).toStrictEqual(JSON.parse(text))
    })
  }

  it("holds what the README says: the statuses, audit records and sizes 0.1 wrote", () => {
    expect(callOf(load("paused.json"), "call_del").status).toStrictEqual({ _tag: "AwaitingApproval", expiresAt: T0 + 3_600_000 })
    expect(callOf(load("scheduled.json"), "call_sched").status).toStrictEqual({ _tag: "Scheduled", at: T0 + 86_400_000 })
    expect(Messages.toolCalls(load("mixed.json")).map((c) => c.status._tag)).toEqual([
      "Completed",
      "Failed",
      "AwaitingApproval",
      "Scheduled",
      "Rejected"
    ])
    expect(callOf(load("approved-audited.json"), "call_crash").status).toStrictEqual({
      _tag: "Approved",
      editedArguments: "{\"paths\":[\"c.log\",\"d.log\"]}",
      expiresAt: T0 + 3_600_000,
      decision: { by: "alice@example.com", at: T0 + 60_000 }
    })
    expect(callOf(load("rejected-audited.json"), "call_crash").status).toMatchObject({
      _tag: "Rejected",
      by: "user",
      decision: { by: "bob@example.com", at: T0 + 120_000 }
    })
    expect(callOf(load("running-crashed.json"), "call_crash").status._tag).toBe("Running")
    // 9,999 messages of history, the question, and the response proposing a call that awaits approval.
    expect(load("long-paused.json")).toHaveLength(10_001)
    expect(callOf(load("long-paused.json"), "call_long").status._tag).toBe("AwaitingApproval")
    expect(Messages.lastResponse(load("completed-audited.json"))?.parts).toStrictEqual([{ _tag: "Text", text: "Deleted c.log and d.log." }])
  })
})

describe("v0.1 signed documents", () => {
  for (const s of signed) {
    it.effect(`${s.file}: verifies with the fixture secret, re-signs byte for byte, and a tampered copy is refused`, () =>
      Effect.gen(function*() {
        const text = read(s.file)
        const expected = { conversationId: s.conversationId, atLeastVersion: s.version }
        const verified = yield* SignedState.verify(text, secret, expected)
        expect(verified.version).toBe(s.version)
        expect(verified.messages).toStrictEqual(load(s.of))
        expect(yield* SignedState.sign(verified.messages, secret, s)).toBe(text)

        // The document itself changed (a text, a call's status), the binding rewritten.
        const tampers = [
          text.replace(/"text":"([^"]*)"/, "\"text\":\"$1!\""),
          text.replace(`"conversationId":"${s.conversationId}"`, "\"conversationId\":\"conv-9\""),
          text.replace(`"version":${s.version},`, `"version":${s.version + 1},`),
          text.replace("\"AwaitingApproval\"", "\"Approved\"").replace("\"Approved\",\"editedArguments\"", "\"Running\",\"editedArguments\"")
        ]
        for (const tampered of tampers) {
          expect(tampered).not.toBe(text)
          const error = yield* Effect.flip(SignedState.verify(tampered, secret, expected))
          expect(error._tag).toBe("StateDecodeError")
          expect(error.message).toContain("signature does not match")
        }
        // Another key, another conversation, a newer expected version.
        const otherKey = yield* Effect.flip(SignedState.verify(text, Redacted.make("another secret, also 32 bytes or more"), expected))
        expect(otherKey.message).toContain("signature does not match")
        const otherConversation = yield* Effect.flip(SignedState.verify(text, secret, { ...expected, conversationId: "conv-9" }))
        expect(otherConversation.message).toContain("another conversation")
        const replay = yield* Effect.flip(SignedState.verify(text, secret, { ...expected, atLeastVersion: s.version + 1 }))
        expect(replay.message).toContain(`older than ${s.version + 1}`)
      }))
  }
})

// ---------------------------------------------------------------------------
// Resuming
// ---------------------------------------------------------------------------

describe("v0.1 documents resume through Chat", () => {
  it.effect("paused: after Messages.approve, the approved call runs exactly once and the turn completes", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 60_000)
      const { chat, model, ran } = yield* setup()
      const approved = Result.getOrThrow(Messages.approve(load("paused.json"), "call_del"))
      const result = yield* chat.resume(approved)
      expect(result.outcome._tag).toBe("Complete")
      expect(ran).toEqual([{ name: "delete_files", params: { paths: ["a.log", "b.log"] } }])
      expect(callOf(result.messages, "call_del").status).toStrictEqual({ _tag: "Completed", result: { deleted: 2 } })
      // The model saw the result, and the stored form of what it returns is still 0.1's format.
      expect(model.requests).toHaveLength(1)
      expect(Messages.projectToolCall(callOf(model.requests[0]!.messages, "call_del")).result?.value).toEqual({ deleted: 2 })
      expect(Result.getOrThrow(Messages.fromJson(Result.getOrThrow(Messages.toJson(result.messages))))).toStrictEqual(result.messages)
      // Resuming the completed turn again runs nothing.
      const again = yield* chat.resume(result.messages)
      expect(again.outcome._tag).toBe("Complete")
      expect(ran).toHaveLength(1)
    }))

  it.effect("paused: without a decision it pauses again on the same call, and nothing runs", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 60_000)
      const { chat, model, ran } = yield* setup()
      const result = yield* chat.resume(load("paused.json"))
      expect(result.outcome).toMatchObject({ _tag: "Paused", reason: { _tag: "AwaitingApproval", toolIds: ["call_del"] } })
      expect(result.messages).toStrictEqual(load("paused.json"))
      expect(ran).toEqual([])
      expect(model.requests).toHaveLength(0)
    }))

  it.effect("approved-audited: runs once with the edited arguments and keeps its decision record through Completed", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 120_000)
      const { chat, ran } = yield* setup([MockLanguageModel.text("Deleted c.log and d.log.")])
      const result = yield* chat.resume(load("approved-audited.json"))
      expect(result.outcome._tag).toBe("Complete")
      expect(ran).toEqual([{ name: "delete_files", params: { paths: ["c.log", "d.log"] } }])
      expect(callOf(result.messages, "call_crash").status).toStrictEqual({
        _tag: "Completed",
        result: { deleted: 2 },
        editedArguments: "{\"paths\":[\"c.log\",\"d.log\"]}",
        decision: { by: "alice@example.com", at: T0 + 60_000 }
      })
      // The turn is exactly what 0.1 stored after the same run (completed-audited.json), byte for byte.
      const completed = load("completed-audited.json")
      expect(result.messages).toStrictEqual(completed)
      expect(Result.getOrThrow(Messages.toJson(result.messages))).toBe(read("completed-audited.json"))
    }))

  it.effect("approved-audited, resumed after its approval's deadline: expired (0.1 said rejected by policy), never run", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 3_600_000)
      const { chat, ran } = yield* setup()
      const result = yield* chat.resume(load("approved-audited.json"))
      expect(ran).toEqual([])
      expect(callOf(result.messages, "call_crash").status).toMatchObject({ _tag: "Expired", approvedLate: true, decision: { by: expect.any(String) } })
    }))

  it.effect("running-crashed: resumes without running the call again; it fails as interrupted, outcome unknown", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 120_000)
      const { chat, model, ran } = yield* setup()
      const result = yield* chat.resume(load("running-crashed.json"))
      expect(result.outcome._tag).toBe("Complete")
      expect(ran).toEqual([])
      const status = callOf(result.messages, "call_crash").status
      // Turn's `Resume`: a Running call not listed in `rerun` (delete_files is not idempotent) becomes Failed,
      // keeping its edited arguments and its decision record; the model is then called with that answer.
      expect(status).toStrictEqual({
        _tag: "Failed",
        error: "The call was interrupted while running; its outcome is unknown, and it was not run again to avoid repeating its effects.",
        editedArguments: "{\"paths\":[\"c.log\",\"d.log\"]}",
        decision: { by: "alice@example.com", at: T0 + 60_000 }
      })
      expect(model.requests).toHaveLength(1)
      const seen = Messages.projectToolCall(callOf(model.requests[0]!.messages, "call_crash"))
      expect(seen.arguments).toBe("{\"paths\":[\"c.log\",\"d.log\"]}")
      expect(seen.result?.isError).toBe(true)
      expect(seen.result?.text).toContain("outcome is unknown")
    }))

  it.effect("rejected-audited: the model sees the rejection with its reason, nothing runs, the record stays", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 180_000)
      const { chat, model, ran } = yield* setup()
      const result = yield* chat.resume(load("rejected-audited.json"))
      expect(result.outcome._tag).toBe("Complete")
      expect(ran).toEqual([])
      expect(callOf(result.messages, "call_crash").status).toStrictEqual(callOf(load("rejected-audited.json"), "call_crash").status)
      const seen = Messages.projectToolCall(callOf(model.requests[0]!.messages, "call_crash"))
      expect(seen.result?.text).toContain("not today")
    }))

  it.effect("scheduled: pauses again before its time, runs once after it (TestClock)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 60_000)
      const { chat, ran } = yield* setup()
      const early = yield* chat.resume(load("scheduled.json"))
      expect(early.outcome).toMatchObject({
        _tag: "Paused",
        reason: { _tag: "Scheduled", toolIds: ["call_sched"], earliest: T0 + 86_400_000 }
      })
      expect(ran).toEqual([])
      yield* TestClock.setTime(T0 + 86_400_000 - 1)
      expect((yield* chat.resume(early.messages)).outcome._tag).toBe("Paused")
      expect(ran).toEqual([])
      yield* TestClock.setTime(T0 + 86_400_000)
      const due = yield* chat.resume(early.messages)
      expect(due.outcome._tag).toBe("Complete")
      expect(ran).toEqual([{ name: "schedule_cleanup", params: { folder: "/var/log" } }])
      expect(callOf(due.messages, "call_sched").status).toStrictEqual({ _tag: "Completed", result: "cleaned /var/log" })
      yield* chat.resume(due.messages)
      expect(ran).toHaveLength(1)
    }))

  it.effect("scheduled, with waitForScheduled: sleeps on the clock until its time, then runs once", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 60_000)
      const { chat, ran } = yield* setup()
      const fiber = yield* Effect.forkChild(chat.resume(load("scheduled.json"), { waitForScheduled: true }))
      yield* TestClock.adjust("23 hours")
      expect(ran).toEqual([])
      yield* TestClock.adjust("1 hour")
      const result = yield* Fiber.join(fiber)
      expect(result.outcome._tag).toBe("Complete")
      expect(ran).toEqual([{ name: "schedule_cleanup", params: { folder: "/var/log" } }])
    }))

  it.effect("mixed: pauses again on the approval and the scheduled call; the resolved calls stay as 0.1 wrote them", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 60_000)
      const { chat, model, ran } = yield* setup()
      const mixed = load("mixed.json")
      const result = yield* chat.resume(mixed)
      expect(result.outcome).toMatchObject({
        _tag: "Paused",
        reason: { _tag: "Mixed", approvals: ["call_del2"], scheduled: [{ id: "call_later", at: T0 + 86_400_000 }] }
      })
      expect(result.messages).toStrictEqual(mixed)
      expect(ran).toEqual([])
      expect(model.requests).toHaveLength(0)
      // Approving and rejecting the rest: the approved delete runs once, the scheduled one is refused.
      const decided = Result.getOrThrow(
        Result.flatMap(Messages.approve(mixed, "call_del2"), (m) => Messages.reject(m, "call_later", "not needed"))
      )
      const done = yield* chat.resume(decided)
      expect(done.outcome._tag).toBe("Complete")
      expect(ran).toEqual([{ name: "delete_files", params: { paths: ["a.log"] } }])
      expect(Messages.toolCalls(done.messages).map((c) => c.status._tag)).toEqual([
        "Completed",
        "Failed",
        "Completed",
        "Rejected",
        "Rejected"
      ])
    }))

  it.effect("long-paused (10,001 messages): decodes, its approved call runs exactly once, and the turn completes", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 60_000)
      const { chat, model, ran } = yield* setup([MockLanguageModel.text("Deleted z.log.")])
      const long = load("long-paused.json")
      const again = yield* chat.resume(long)
      expect(again.outcome._tag).toBe("Paused")
      expect(model.requests).toHaveLength(0)
      const approved = yield* Effect.fromResult(Messages.approve(long, "call_long"))
      const resumed = yield* chat.resume(approved)
      expect(resumed.outcome).toMatchObject({ _tag: "Complete", value: "Deleted z.log." })
      expect(ran).toEqual([{ name: "delete_files", params: { paths: ["z.log"] } }])
      expect(model.requests).toHaveLength(1)
      expect(model.requests[0]!.messages).toHaveLength(10_001)
      expect(resumed.messages).toHaveLength(10_002)
      // Resuming the completed turn runs nothing more.
      const done = yield* chat.resume(resumed.messages)
      expect(done.outcome._tag).toBe("Complete")
      expect(ran).toHaveLength(1)
      // And it is stored in 0.1's format: the 9,999 messages of history byte for byte.
      const stored = Result.getOrThrow(Messages.toJson(resumed.messages))
      const history = read("long-paused.json")
      const prefix = history.slice(0, history.indexOf("\"delete z.log\""))
      expect(stored.startsWith(prefix)).toBe(true)
    }))

  it.effect("long-paused, signed: verifies and resumes the same", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0 + 60_000)
      const { chat, model, ran } = yield* setup([MockLanguageModel.text("Deleted z.log.")])
      const { messages } = yield* SignedState.verify(read("signed-long.json"), secret, { conversationId: "conv-3", atLeastVersion: 1 })
      expect(messages).toStrictEqual(load("long-paused.json"))
      const resumed = yield* chat.resume(yield* Effect.fromResult(Messages.approve(messages, "call_long")))
      expect(resumed.outcome._tag).toBe("Complete")
      expect(ran).toEqual([{ name: "delete_files", params: { paths: ["z.log"] } }])
      expect(model.requests).toHaveLength(1)
    }))
})
