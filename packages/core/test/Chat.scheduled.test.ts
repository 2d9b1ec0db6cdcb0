import { describe, expect, it } from "@effect/vitest"
import { Clock, DateTime, Effect, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Action, Chat, Messages, PauseReason, Tool, Toolkit } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { complete, paused, seen } from "./support/Chat.helpers.js"

const HOUR = 3_600_000

const Remind = Tool.make("remind", {
  description: "Send a reminder.",
  parameters: { text: Schema.String },
  success: Schema.String
})

/** Reminders run in an hour, or "in N minutes" when their text says so. */
const deferByText = Toolkit.withStrategy(Toolkit.make(Remind), (call) => {
  const match = /in (\d+) minutes/.exec(call.params.text)
  return match === null ? Action.Defer({ after: "1 hour" }) : Action.Defer({ after: `${Number(match[1])} minutes` })
})

const setup = (kit: typeof deferByText, script: ReadonlyArray<MockLanguageModel.ScriptedResponse>) =>
  Effect.gen(function*() {
    const sent: Array<{ readonly text: string; readonly at: number }> = []
    const handlers = kit.toLayer({
      remind: ({ text }) =>
        Effect.map(Clock.currentTimeMillis, (at) => {
          sent.push({ text, at })
          return `sent: ${text}`
        })
    })
    const model = MockLanguageModel.make(script)
    const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
    return { chat, model, sent }
  })

const oneReminder = [
  MockLanguageModel.toolCalls([{ id: "r1", name: "remind", arguments: { text: "stand up" } }]),
  MockLanguageModel.text("I reminded you.")
]

describe("Chat: scheduled calls", () => {
  it.effect("waitForScheduled: a call deferred by one hour has not run after 59 minutes and has run after 60", () =>
    Effect.gen(function*() {
      const { chat, model, sent } = yield* setup(deferByText, oneReminder)
      const fiber = yield* chat.complete(Messages.fromUser("Remind me to stand up."), { waitForScheduled: true }).pipe(
        Effect.forkChild
      )
      yield* TestClock.adjust("59 minutes")
      expect(sent).toEqual([])
      expect(fiber.pollUnsafe()).toBeUndefined()
      expect(model.requests).toHaveLength(1)

      yield* TestClock.adjust("1 minute")
      const result = yield* Fiber.join(fiber)
      expect(sent).toEqual([{ text: "stand up", at: HOUR }])
      expect(complete(result).value).toBe("I reminded you.")
      expect(seen(model.requests[1], "r1").result?.value).toBe("sent: stand up")
    }))

  it.effect("waitForScheduled: several calls run each at its own time, the model is called once after the last", () =>
    Effect.gen(function*() {
      const { chat, model, sent } = yield* setup(deferByText, [
        MockLanguageModel.toolCalls([
          { id: "late", name: "remind", arguments: { text: "drink water in 120 minutes" } },
          { id: "soon", name: "remind", arguments: { text: "stretch in 30 minutes" } }
        ]),
        MockLanguageModel.text("Both sent.")
      ])
      const fiber = yield* chat.complete(Messages.fromUser("Remind me twice."), { waitForScheduled: true }).pipe(Effect.forkChild)
      yield* TestClock.adjust("30 minutes")
      expect(sent.map((s) => s.text)).toEqual(["stretch in 30 minutes"])
      yield* TestClock.adjust("89 minutes")
      expect(sent).toHaveLength(1)
      expect(model.requests).toHaveLength(1)
      yield* TestClock.adjust("1 minute")
      complete(yield* Fiber.join(fiber))
      expect(sent).toEqual([
        { text: "stretch in 30 minutes", at: HOUR / 2 },
        { text: "drink water in 120 minutes", at: 2 * HOUR }
      ])
      expect(model.requests).toHaveLength(2)
    }))

  it.effect("without waitForScheduled: a Scheduled pause; resuming before the time stays paused, after it runs", () =>
    Effect.gen(function*() {
      const { chat, model, sent } = yield* setup(deferByText, oneReminder)
      const first = yield* chat.complete(Messages.fromUser("Remind me to stand up."))
      const reason = paused(first).reason
      expect(reason).toEqual({ _tag: "Scheduled", toolIds: ["r1"], earliest: HOUR })
      expect(PauseReason.earliest(reason)).toBe(HOUR)
      expect(PauseReason.approvalIds(reason)).toEqual([])
      expect(Messages.findTool(first.messages, "r1")?.status).toEqual({ _tag: "Scheduled", at: HOUR })

      yield* TestClock.adjust("30 minutes")
      const early = yield* chat.resume(first.messages)
      expect(paused(early).reason).toEqual(reason)
      expect(sent).toEqual([])
      expect(model.requests).toHaveLength(1)

      yield* TestClock.adjust("30 minutes")
      const due = yield* chat.resume(early.messages)
      complete(due)
      expect(sent).toEqual([{ text: "stand up", at: HOUR }])
      expect(model.requests).toHaveLength(2)
    }))

  it.effect("a scheduled call can be rejected by a person before its time", () =>
    Effect.gen(function*() {
      const { chat, model, sent } = yield* setup(deferByText, [...oneReminder.slice(0, 1), MockLanguageModel.text("Cancelled.")])
      const first = yield* chat.complete(Messages.fromUser("Remind me."))
      const result = yield* chat.resume(yield* Effect.fromResult(Messages.reject(first.messages, "r1", "no longer needed")))
      complete(result)
      expect(sent).toEqual([])
      expect(seen(model.requests[1], "r1").result?.text).toContain("no longer needed")
    }))

  it.effect("Defer at a DateTime or epoch millis; a time already passed runs at once", () =>
    Effect.gen(function*() {
      const at = yield* Effect.map(DateTime.now, DateTime.add({ hours: 2 }))
      const kit = Toolkit.withStrategy(Toolkit.make(Remind), (call) =>
        call.params.text === "now" ? Action.Defer({ at: 0 }) : Action.Defer({ at }))
      const { chat, sent } = yield* setup(kit, [
        MockLanguageModel.toolCalls([
          { id: "past", name: "remind", arguments: { text: "now" } },
          { id: "later", name: "remind", arguments: { text: "later" } }
        ]),
        MockLanguageModel.text("ok")
      ])
      yield* TestClock.adjust("1 minute")
      const first = yield* chat.complete(Messages.fromUser("Go."))
      expect(paused(first).reason).toEqual({ _tag: "Scheduled", toolIds: ["later"], earliest: 2 * HOUR })
      expect(sent).toEqual([{ text: "now", at: 60_000 }])
    }))

  it.effect("waitForScheduled still returns for approvals: a Mixed pause keeps each scheduled call's own time", () =>
    Effect.gen(function*() {
      const kit = Toolkit.withStrategy(Toolkit.make(Remind), (call) =>
        call.params.text === "ask me"
          ? Action.RequireApproval()
          : Action.Defer({ after: call.params.text === "soon" ? "10 minutes" : "20 minutes" }))
      const { chat, model, sent } = yield* setup(kit, [
        MockLanguageModel.toolCalls([
          { id: "s1", name: "remind", arguments: { text: "soon" } },
          { id: "a", name: "remind", arguments: { text: "ask me" } },
          { id: "s2", name: "remind", arguments: { text: "later" } }
        ]),
        MockLanguageModel.text("ok")
      ])
      const first = yield* chat.complete(Messages.fromUser("Go."), { waitForScheduled: true })
      expect(paused(first).reason).toEqual({
        _tag: "Mixed",
        approvals: ["a"],
        scheduled: [{ id: "s1", at: 600_000 }, { id: "s2", at: 1_200_000 }]
      })
      expect(PauseReason.toolIds(paused(first).reason)).toEqual(["a", "s1", "s2"])
      expect(sent).toEqual([])

      // Once the approval is given, the resumed turn waits for the scheduled calls instead of pausing.
      const fiber = yield* chat.resume(yield* Effect.fromResult(Messages.approve(first.messages, "a")), { waitForScheduled: true }).pipe(Effect.forkChild)
      yield* TestClock.adjust("10 minutes")
      expect(sent.map((s) => s.text)).toEqual(["ask me", "soon"])
      yield* TestClock.adjust("10 minutes")
      complete(yield* Fiber.join(fiber))
      expect(sent.map((s) => s.text)).toEqual(["ask me", "soon", "later"])
      expect(model.requests).toHaveLength(2)
    }))
})

describe("Chat: approval expiry", () => {
  const Transfer = Tool.make("transfer", { description: "Move money.", parameters: { amount: Schema.Number }, success: Schema.String })
  // The approval request is valid for 15 minutes from the decision.
  const kit = Toolkit.withStrategy(
    Toolkit.make(Transfer),
    () => Effect.map(DateTime.now, (now) => Action.RequireApproval({ expiresAt: DateTime.add(now, { minutes: 15 }) }))
  )

  const setupTransfer = Effect.gen(function*() {
    const moved: Array<number> = []
    const handlers = kit.toLayer({ transfer: ({ amount }) => Effect.sync(() => (moved.push(amount), "moved")) })
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "t", name: "transfer", arguments: { amount: 100 } }]),
      MockLanguageModel.text("The request expired; nothing was moved.")
    ])
    const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
    const first = yield* chat.complete(Messages.fromUser("Send 100."))
    expect(paused(first).reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["t"] })
    expect(Messages.findTool(first.messages, "t")?.status).toEqual({ _tag: "AwaitingApproval", expiresAt: 15 * 60_000 })
    return { chat, model, moved, first }
  })

  it.effect("after expiresAt, resuming expires the call (its own outcome, not a rejection) with a text the model sees", () =>
    Effect.gen(function*() {
      const { chat, first, model, moved } = yield* setupTransfer
      yield* TestClock.adjust("14 minutes")
      const before = yield* chat.resume(first.messages)
      expect(paused(before).reason).toEqual({ _tag: "AwaitingApproval", toolIds: ["t"] })
      expect(model.requests).toHaveLength(1)

      yield* TestClock.adjust("1 minute")
      const after = yield* chat.resume(before.messages)
      expect(complete(after).value).toBe("The request expired; nothing was moved.")
      expect(moved).toEqual([])
      const status = Messages.findTool(after.messages, "t")?.status
      expect(status).toStrictEqual({ _tag: "Expired", expiresAt: 15 * 60_000 })
      const result = seen(model.requests[1], "t").result
      expect(result?.isError).toBe(true)
      expect(result?.text).toContain("nobody decided in time")
      expect(result?.text).not.toContain("rejected")
      expect(result?.text).toContain("expired at 1970-01-01T00:15:00.000Z")
    }))

  it.effect("an approval given in time runs the call", () =>
    Effect.gen(function*() {
      const { chat, first, moved } = yield* setupTransfer
      yield* TestClock.adjust("10 minutes")
      complete(yield* chat.resume(yield* Effect.fromResult(Messages.approve(first.messages, "t"))))
      expect(moved).toEqual([100])
    }))

  it.effect("an approval resumed after the deadline does not run the call (fail closed)", () =>
    Effect.gen(function*() {
      const { chat, first, model, moved } = yield* setupTransfer
      yield* TestClock.adjust("10 minutes")
      const approved = yield* Effect.fromResult(Messages.approve(first.messages, "t")) // in time…
      yield* TestClock.adjust("6 minutes")
      const after = yield* chat.resume(approved) // …but the turn resumes after the deadline
      complete(after)
      expect(moved).toEqual([])
      const result = seen(model.requests[1], "t").result
      expect(result?.isError).toBe(true)
      expect(result?.text).toContain("came too late")
    }))
})
