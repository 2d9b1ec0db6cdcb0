/**
 * How the demo shows a scheduled call's time: a time still ahead reads as a
 * future ("scheduled for … (in 3s)"), a time already passed as due, never as
 * "(now)" or a choice to wait for it.
 */
import { describe, expect, it } from "@effect/vitest"
import { clockTime, pendingBox, style, whenDue } from "../src/demo/render.js"

const at = new Date(2026, 0, 5, 11, 2, 41).getTime()
const call = {
  _tag: "ToolCall",
  id: "call_1",
  name: "schedule_cleanup",
  arguments: "{}",
  status: { _tag: "Pending" }
} as unknown as Parameters<typeof pendingBox>[1]["call"]

describe("scheduled times", () => {
  it("a time ahead is scheduled, with how long until it", () => {
    expect(whenDue(at, at - 3_000)).toBe(`scheduled for ${clockTime(at)} (in 3s)`)
  })

  it("a time reached or passed is due, not a future", () => {
    for (const now of [at, at + 1, at + 60_000]) {
      const text = whenDue(at, now)
      expect(text).toBe(`due since ${clockTime(at)} (it runs when the turn goes on)`)
      expect(text).not.toMatch(/scheduled for|\(now\)/)
    }
  })

  it("the pending call's box says the same", () => {
    const box = pendingBox(style(false), { call, kind: { _tag: "Scheduled", at }, policy: undefined }, at + 5_000)
    expect(box.split("\n")[0]).toBe(`┌ schedule_cleanup (call_1) · due since ${clockTime(at)} (it runs when the turn goes on)`)
  })
})
