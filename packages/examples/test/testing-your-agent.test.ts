/**
 * Testing your own agent (see docs/testing.md): script the model with
 * `MockLanguageModel`, swap the tool handlers for recording fakes, move time
 * with `TestClock`, and state properties that must hold for any input
 * (fast-check).
 *
 * The agents under test are the examples' refund agent
 * (src/tools-with-context.ts) and reminder agent (src/scheduled-calls.ts).
 */
// #region imports
import { Chat, Messages, PauseReason } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
// #endregion imports
import * as Reminders from "../src/scheduled-calls.js"
import { CurrentUser, toolkit } from "../src/tools-with-context.js"

// #region fakes
/** Handlers that record the refunds instead of moving money. */
const recordingHandlers = () => {
  const refunds: Array<{ readonly orderId: string; readonly amount: number }> = []
  const layer = toolkit.toLayer({
    lookup_order: ({ orderId }) => Effect.succeed({ orderId, total: 100, status: "delivered" }),
    refund_order: ({ amount, orderId }) =>
      Effect.sync(() => {
        refunds.push({ orderId, amount })
        return { refunded: amount }
      })
  })
  return { refunds, layer }
}

const ana = { name: "Ana", canRefund: true }
// #endregion fakes

describe("the refund agent", () => {
  // #region scripted
  it.effect("a small refund runs at once and its result reaches the model", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "r1", name: "refund_order", arguments: { orderId: "A-1", amount: 20 } }]),
        MockLanguageModel.text("Refunded 20.")
      ])
      const { layer, refunds } = recordingHandlers()
      const chat = yield* Chat.make({ tools: toolkit }).pipe(Effect.provide(Layer.merge(model.layer, layer)))

      const result = yield* chat.complete(Messages.fromUser("Refund 20 on A-1")).pipe(
        Effect.provideService(CurrentUser, ana)
      )

      expect(result.outcome._tag).toBe("Complete")
      expect(refunds).toEqual([{ orderId: "A-1", amount: 20 }])
      // What the model saw: the tools it was offered, then the call's result.
      expect(model.requests[0]!.tools.map((tool) => tool.name)).toEqual(["lookup_order", "refund_order"])
      const seen = Messages.findTool(model.requests[1]!.messages, "r1")!
      expect(Messages.projectToolCall(seen).result?.value).toEqual({ refunded: 20 })
    }))
  // #endregion scripted

  // #region property
  it("a refund runs without a person only when the user may refund and the amount is under 50", () =>
    fc.assert(fc.asyncProperty(fc.integer({ min: 0, max: 10_000 }), fc.boolean(), (amount, canRefund) =>
      Effect.runPromise(Effect.gen(function*() {
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "r1", name: "refund_order", arguments: { orderId: "A-1", amount } }]),
          MockLanguageModel.text("Done.")
        ])
        const { layer, refunds } = recordingHandlers()
        const chat = yield* Chat.make({ tools: toolkit }).pipe(Effect.provide(Layer.merge(model.layer, layer)))
        const result = yield* chat.complete(Messages.fromUser("Refund A-1")).pipe(
          Effect.provideService(CurrentUser, { name: "Someone", canRefund })
        )
        const status = Messages.findTool(result.messages, "r1")!.status._tag

        if (!canRefund) expect(status).toBe("Rejected")
        else if (amount < 50) expect(status).toBe("Completed")
        else expect(result.outcome._tag).toBe("Paused")
        expect(refunds.length).toBe(canRefund && amount < 50 ? 1 : 0)
      }))
    )))

  it("whatever the person decides, exactly the approved refunds are paid", () => {
    const decisions = fc.array(fc.record({ amount: fc.integer({ min: 50, max: 5_000 }), approve: fc.boolean() }), { minLength: 1, maxLength: 6 })
    return fc.assert(fc.asyncProperty(decisions, (decisions) =>
      Effect.runPromise(Effect.gen(function*() {
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls(decisions.map(({ amount }, i) => ({
            id: `r${i}`,
            name: "refund_order",
            arguments: { orderId: `A-${i}`, amount }
          }))),
          MockLanguageModel.text("Done.")
        ])
        const { layer, refunds } = recordingHandlers()
        const chat = yield* Chat.make({ tools: toolkit }).pipe(Effect.provide(Layer.merge(model.layer, layer)))
        const paused = yield* chat.complete(Messages.fromUser("Refund them all")).pipe(Effect.provideService(CurrentUser, ana))
        expect(paused.outcome._tag).toBe("Paused")

        let messages = paused.messages
        for (const [i, { approve }] of decisions.entries()) {
          messages = yield* Effect.fromResult(approve ? Messages.approve(messages, `r${i}`) : Messages.reject(messages, `r${i}`, "no"))
        }
        const done = yield* chat.resume(messages).pipe(Effect.provideService(CurrentUser, ana))

        expect(done.outcome._tag).toBe("Complete")
        expect(refunds.map((r) => r.orderId).sort()).toEqual(
          decisions.flatMap(({ approve }, i) => (approve ? [`A-${i}`] : [])).sort()
        )
      }))
    ))
  })
  // #endregion property
})

describe("the reminder agent", () => {
  // #region clock
  it.effect("sends the reminder when it is due, not before (TestClock)", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "m1", name: "send_reminder", arguments: { to: "Sam", text: "Plants!" } }]),
        MockLanguageModel.text("Reminded.")
      ])
      const chat = yield* Chat.make({ tools: Reminders.toolkit }).pipe(
        Effect.provide(Layer.merge(model.layer, Reminders.handlers))
      )
      // Without waiting, the turn pauses on the scheduled call, due in 2 seconds of test time.
      const paused = yield* chat.complete(Messages.fromUser("Remind Sam"))
      expect(paused.outcome._tag === "Paused" && PauseReason.earliest(paused.outcome.reason)).toBe(2_000)

      // Waiting sleeps on the TestClock: nothing happens until the clock is moved.
      const fiber = yield* Effect.forkChild(chat.resume(paused.messages, { waitForScheduled: true }))
      yield* TestClock.adjust("1999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const done = yield* Fiber.join(fiber)

      expect(done.outcome._tag).toBe("Complete")
      expect(Messages.findTool(done.messages, "m1")!.status).toEqual({
        _tag: "Completed",
        result: { sentAt: "1970-01-01T00:00:02.000Z" }
      })
    }))
  // #endregion clock
})
